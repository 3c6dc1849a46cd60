import Foundation
import HTTPTypes
import Hummingbird
import Logging
package import RelayApplication
import RelayCore
import RelayStore

extension Relay {
    /// The statuses of refused requests the audit log records: validation, authentication, a disabled tenant, size,
    /// media type and rate limits. Server-side trouble (5xx) and unknown routes are not refusals.
    static let auditedRefusals: Set<Int> = [400, 401, 403, 413, 415, 429]

    /// Writes the audit record of a refused request (by key id only, never the key; validation by paths only, never
    /// values), and returns once it is committed. A refusal without a valid key (no tenant or operator known) is
    /// recorded so only when it is its address's first in the minute; later ones are tallied (``AnonymousRefusals``)
    /// and written as one record when the minute has ended.
    ///
    /// - Parameters:
    ///   - origin: The request's id and client.
    ///   - subject: The tenant, key id and operator, as far as they were known when the request was refused.
    package func recordRefusal(_ error: RelayHTTPError, origin: RequestOrigin, subject: RefusalSubject) async {
        guard Self.auditedRefusals.contains(error.status.code) else { return }
        let millis = AuditTime.millis(clock.date)
        if subject.tenantID == nil, subject.actor == nil {
            let code = error.entries.first?.code ?? "\(error.status.code)"
            let first = anonymousRefusals.refused(
                client: origin.client, millis: millis, outcome: code, keyID: subject.keyID)
            guard first else { return }
        }
        let paths = error.entries.compactMap(\.path)
        let entry = AuditEntry(
            timeMillis: millis,
            event: .refused,
            tenantID: subject.tenantID,
            keyID: subject.keyID,
            requestID: origin.requestID,
            client: origin.client,
            outcome: error.entries.first?.code,
            upstreamStatus: nil,
            actor: subject.actor,
            detail: paths.isEmpty ? nil : "fields: " + paths.prefix(20).joined(separator: ", ")
        )
        do {
            try await commits.submit(StoreBatch(), audit: [entry])
        } catch {
            // The refusal is answered anyway; the log line says the record is missing.
            logger.error("Audit record of a refused request not stored", metadata: ["error": "\(error)"])
        }
    }
}

/// Records every refused request in the audit log: the router turns a handler's error into its response before the
/// responder sees it, so the record is written here, around every route, and the error passes on as the caller will
/// see it. What is known of the caller comes with the error (``AttributedRefusal``); the request's origin is this
/// context's.
struct RefusalAuditMiddleware: RouterMiddleware {
    typealias Context = RelayRequestContext
    let relay: Relay

    func handle(
        _ request: Request,
        context: RelayRequestContext,
        next: (Request, RelayRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let refusal as AttributedRefusal {
            await relay.recordRefusal(refusal.error, origin: context.origin, subject: refusal.subject)
            throw refusal.error
        } catch let error as RelayHTTPError {
            await relay.recordRefusal(error, origin: context.origin, subject: RefusalSubject())
            throw error
        }
    }
}
