import Foundation
import HTTPTypes
package import Hummingbird
import Logging
import Metrics
import NIOCore
import RelayApplication
import RelayCore

/// Wraps the router: a request id for every request (in the logger's metadata and the `X-Request-ID` header), one
/// log line per request with the route template, never the raw path (it may carry a tenant key), and a JSON body
/// for every error, including unknown routes. Anything unexpected becomes a bare 500 with no detail.
package struct RelayResponder<Base: HTTPResponder>: HTTPResponder where Base.Context == RelayRequestContext {
    let base: Base
    let relay: Relay

    /// The request metrics' handles, made once per route and status rather than per request.
    let metrics = HTTPRequestMetrics()

    package func respond(to request: Request, context: RelayRequestContext) async throws -> Response {
        var context = context
        var request = request
        if let (key, path) = TenantPathKey.split(request.head.path) {
            // Routed as if the key had come as Bearer: every tenant route takes it, and no route template holds it.
            var head = request.head
            head.path = path
            request = Request(head: head, body: request.body)
            context.pathKey = key
        }
        let requestID = request.headers[.requestID].flatMap { Self.acceptable($0) } ?? Self.makeID()
        // One request id in the logs: the relay's (echoed in X-Request-ID), not also Hummingbird's own.
        context.logger[metadataKey: "hb.request.id"] = nil
        context.logger[metadataKey: "relay.request.id"] = "\(requestID)"
        let client = relay.settings.trustedProxies.client(
            peer: context.peerAddress,
            forwardedFor: request.headers[.xForwardedFor]
        )
        context.origin = RequestOrigin(requestID: requestID, client: client)
        let started = ContinuousClock.now
        var response: Response
        do {
            response = try await base.respond(to: request, context: context)
            if response.status == .notFound && response.headers[.contentType] == nil {
                // The router's own answer for an unknown route has no body; every answer of the relay is JSON.
                response = try RelayHTTPError.notFound.response(from: request, context: context)
            }
        } catch let error as RelayHTTPError {
            response = try error.response(from: request, context: context)
        } catch let refusal as AttributedRefusal {
            // ``RefusalAuditMiddleware`` unwraps these around every route; this is the safety net.
            response = try refusal.error.response(from: request, context: context)
        } catch let refusal as RequestRefusal {
            // Routes render refusals themselves (``rendered(_:)``, so that they are audited); this is the safety net.
            response = try RelayHTTPError(refusal).response(from: request, context: context)
        } catch let error as HTTPError {
            let code: RelayHTTPError.Code =
                error.status == .notFound
                ? .notFound : error.status == .methodNotAllowed ? .methodNotAllowed : .httpError
            let message = error.status == .notFound ? "No such route." : error.status.reasonPhrase
            response = try RelayHTTPError(error.status, code: code, message: message).response(
                from: request, context: context)
        } catch {
            context.logger.error("Request failed unexpectedly", metadata: ["error.type": "\(type(of: error))"])
            response = try RelayHTTPError(
                .internalServerError, code: .internalError, message: "Something went wrong inside the relay."
            )
            .response(from: request, context: context)
        }
        response.headers[.requestID] = requestID
        let route = (context.pathKey == nil ? "" : TenantPathKey.template) + (context.endpointPath ?? "unknown")
        let elapsed = started.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // The access line: one per request at `info`, with the route template (never the raw path, which may
        // hold a key) and numbers as numbers (the JSON log handler keeps them so). Its metadata is built only when
        // the line is logged: a dictionary of seven entries per request was most of what the access line cost a
        // relay logging at `warning` (`relay-bench relay`, single-message phase).
        if context.logger.logLevel <= .info {
            var access: Logger.Metadata = [
                "http.method": .string(request.method.rawValue), "http.route": .string(route),
                "http.status": .stringConvertible(Int(response.status.code)),
                "http.duration_ms": .stringConvertible((seconds * 1_000_000).rounded() / 1_000),
                "client.address": .string(context.origin.client ?? "unknown"),
            ]
            if let tenantID = context.attribution.tenantID { access["relay.tenant.id"] = .string(tenantID) }
            if let keyID = context.attribution.keyID { access["relay.key.id"] = .string(keyID) }
            context.logger.info("Request", metadata: access)
        }
        let handles = metrics.handles(route: route, status: Int(response.status.code))
        handles.requests.increment()
        handles.duration.recordNanoseconds(Int64(seconds * 1e9))
        return response
    }

    /// A caller's request id is kept if it is short and plain; otherwise the relay makes one.
    static func acceptable(_ id: String) -> String? {
        id.count <= 64 && id.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" } ? id : nil
    }

    static func makeID() -> String {
        String(UUID.randomString().prefix(18))
    }
}

/// A tenant key in the path: `/t/<key>/<tenant route>`, for clients that can be given a URL and nothing else
/// (OneUptime installs; an Expo SDK whose host or API prefix is set).
enum TenantPathKey {
    /// How a request with a key in its path shows in logs and metrics, before its route template.
    static let template = "/t/{key}"

    /// The routes a key in the path may lead to: the tenant's own, never the admin API or health checks.
    static let tenantRoutes = [
        "/v1/push", "/v1/receipts", "/v1/whoami", "/--/api/v2/push/", "/api/notification/push-relay/", "/push-relay/",
    ]

    /// The key and the rest of the path, when `path` is `/t/<key>` followed by a tenant route; `nil` otherwise (the
    /// router then answers 404).
    static func split(_ path: String?) -> (key: String, path: String)? {
        guard let path, path.hasPrefix("/t/") else { return nil }
        let afterPrefix = path.dropFirst(3)
        guard let slash = afterPrefix.firstIndex(of: "/") else { return nil }
        let key = afterPrefix[..<slash]
        let rest = afterPrefix[slash...]
        guard !key.isEmpty, tenantRoutes.contains(where: { rest.hasPrefix($0) }) else { return nil }
        return (String(key), String(rest))
    }
}
