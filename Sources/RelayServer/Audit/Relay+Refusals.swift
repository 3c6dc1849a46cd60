import Foundation
import RelayCore
import RelayStore
import Logging
import HTTPTypes
import Hummingbird
package import RelayApplication

extension Relay {
    /// The statuses of refused requests the audit log records: validation, authentication, a disabled tenant, size,
    /// media type and rate limits. Server-side trouble (5xx) and unknown routes are not refusals.
    static let auditedRefusals: Set<Int> = [400, 401, 403, 413, 415, 429]

    /// Writes the audit record of a refused request (by key id only, never the key; validation by paths only, never
    /// values), and returns once it is committed.
    package func recordRefusal(_ error: RelayHTTPError, trail: RequestTrail) async {
        guard Self.auditedRefusals.contains(error.status.code) else { return }
        let fields = trail.current
        let paths = error.entries.compactMap(\.path)
        let entry = AuditEntry(
            timeMillis: AuditTime.millis(Date()),
            event: .refused,
            tenantID: fields.tenantID,
            keyID: fields.keyID,
            requestID: fields.requestID,
            client: fields.client,
            outcome: error.entries.first?.code,
            upstreamStatus: nil,
            actor: fields.actor,
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
/// responder sees it, so the record is written here, around the handlers, and the error passes on unchanged.
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
        } catch let error as RelayHTTPError {
            await relay.recordRefusal(error, trail: context.trail)
            throw error
        }
    }
}
