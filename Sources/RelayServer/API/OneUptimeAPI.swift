import HTTPTypes
import Hummingbird
import RelayCore

/// The OneUptime-compatible API: the body OneUptime's self-hosted installs send to their push relay, on both of its
/// paths, with the tenant key as Bearer or, because those installs can only configure a URL, in the path
/// (`/t/<key>/…`). Such a key is never logged: the request log shows the route template only.
struct OneUptimeAPI: Sendable {
    let relay: Relay

    /// The fields OneUptime sends.
    static let fields: Set<String> = ["to", "title", "body", "data", "sound", "priority", "channelId", "interruptionLevel"]

    func addRoutes(to router: Router<RelayRequestContext>) {
        for path in ["/api/notification/push-relay/send", "/push-relay/send"] {
            router.post(RouterPath(path)) { request, context in try await send(request, context: context, pathKey: nil) }
            router.post(RouterPath("/t/:key" + path)) { request, context in
                try await send(request, context: context, pathKey: context.parameters.get("key"))
            }
        }
    }

    func send(_ request: Request, context: RelayRequestContext, pathKey: String?) async throws -> Response {
        let identity = try await relay.authenticator.authenticate(pathKey ?? bearerKey(request), trail: context.trail)
        let json: JSONValue
        switch await Self.readBody(request, limit: relay.settings.maxBodyBytes) {
        case .success(let body): json = body
        case .failure(let error):
            guard error.status == .badRequest else { throw error }
            return await invalid(error.entries.first?.message ?? "invalid body", context)
        }
        guard case .object(let object) = json else { return Self.error(.badRequest, "the body must be a JSON object") }
        if let unknown = object.keys.sorted().first(where: { !Self.fields.contains($0) }) {
            return await invalid("unknown field '\(unknown)'", context)
        }
        var issues: [ValidationIssue] = []
        guard let message = PushMessage.parse(json, at: .root, issues: &issues) else {
            return await invalid(issues.map(\.description).joined(separator: "; "), context)
        }
        let result: Relay.PushResult
        switch await Self.push(relay, message.pushes, identity: identity, context: context) {
        case .success(let pushed): result = pushed
        case .failure(let error):
            guard error.status == .tooManyRequests else { throw error }
            await relay.recordRefusal(error, trail: context.trail)
            return jsonResponse(
                .object(["error": .string("TOO_MANY_REQUESTS"), "message": .string(error.entries.first?.message ?? "")]),
                status: .tooManyRequests,
                headers: error.headers
            )
        }
        let headers = result.rateLimit.headers
        // OneUptime sends one token per request; with several, the first failure decides the status.
        for ticket in result.tickets {
            guard case .error(let code, let text, let removeToken, let retryAfter) = ticket.state else { continue }
            switch code {
            case "DeviceNotRegistered", "InvalidToken":
                return jsonResponse(.object(["error": .string(code), "removeToken": .bool(removeToken), "message": .string(text), "ticket": ticket.nativeJSON]), status: .gone, headers: headers)
            case "MessageRateExceeded":
                var limited = headers
                limited[.retryAfter] = String(retryAfter ?? 60)
                return jsonResponse(.object(["error": .string(code), "message": .string(text)]), status: .tooManyRequests, headers: limited)
            case "CriticalAlertsNotAllowed":
                return jsonResponse(.object(["error": .string(code), "message": .string(text)]), status: .forbidden, headers: headers)
            case "MessageTooBig", "InvalidArgument":
                return jsonResponse(.object(["error": .string(code), "message": .string(text)]), status: .badRequest, headers: headers)
            default:
                return jsonResponse(.object(["error": .string(code), "message": .string(text)]), status: .badGateway, headers: headers)
            }
        }
        let ticket = result.tickets.first?.nativeJSON ?? .null
        return jsonResponse(.object(["success": .bool(true), "ticket": ticket]), headers: headers)
    }

    static func readBody(_ request: Request, limit: Int) async -> Result<JSONValue, RelayHTTPError> {
        do {
            return .success(try await readJSONBody(request, limit: limit))
        } catch {
            return .failure(error)
        }
    }

    static func push(
        _ relay: Relay,
        _ pushes: [ResolvedPush],
        identity: TenantIdentity,
        context: RelayRequestContext
    ) async -> Result<Relay.PushResult, RelayHTTPError> {
        do {
            return .success(try await relay.push(pushes, identity: identity, trail: context.trail, logger: context.logger))
        } catch {
            return .failure(error)
        }
    }

    /// OneUptime's 400 for an invalid request, after its audit record.
    func invalid(_ message: String, _ context: RelayRequestContext) async -> Response {
        await relay.recordRefusal(RelayHTTPError(.badRequest, code: "VALIDATION_ERROR", message: message), trail: context.trail)
        return Self.error(.badRequest, message)
    }

    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        jsonResponse(.object(["error": .string(message)]), status: status)
    }
}
