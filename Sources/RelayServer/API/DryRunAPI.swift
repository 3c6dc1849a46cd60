import HTTPTypes
import Hummingbird
import RelayApplication
import RelayCore
import RelayProviders

/// Dry runs of the push routes (`"dryRun": true` in a native body, or `Prefer: dry-run` on the native and
/// Expo-compatible routes): each API renders ``DryRun`` in its own shape, `{"dryRun": true, "data": …}`, with each
/// notification's upstream request beside its ticket.
enum DryRunAPI {
    /// The note of a notification that would be sent.
    static let wouldBeSent = "Would be sent; a dry run sends nothing."

    /// Runs the dry run of `pushes` and answers it with `render`; `Preference-Applied: dry-run` when the request
    /// asked for it by `Prefer`.
    static func respond(
        _ pushes: [ResolvedPush],
        relay: Relay,
        context: TenantRequestContext,
        preferenceApplied: Bool,
        render: (DryRun) -> JSONValue
    ) async throws -> Response {
        let identity = context.identity
        let dryRun: DryRun
        do {
            dryRun = try await relay.dryRun(
                pushes, identity: identity, origin: context.origin, logger: context.logger)
        } catch .receiptLookupsExhausted(let retryAfter) {
            throw RelayHTTPError(
                .tooManyRequests,
                code: .tooManyRequests,
                message:
                    "Too many dry runs and receipt lookups; retry after \(retryAfter) s. They share a budget of their own and never use up pushes.",
                headers: [.retryAfter: String(retryAfter)]
            )
        } catch {
            throw RelayHTTPError(error)
        }
        var headers = HTTPFields()
        if preferenceApplied { headers[.preferenceApplied] = RequestPreferences.dryRunToken }
        return jsonResponse(render(dryRun), headers: headers)
    }

    /// The native answer: `{"dryRun": true, "data": [notification, …]}`, one per notification in request order.
    static func nativeJSON(_ dryRun: DryRun) -> JSONValue {
        .object(["dryRun": .bool(true), "data": .array(dryRun.notifications.map(\.nativeJSON))])
    }

    /// The Expo-compatible answer: Expo's tickets without an id (no receipt is made), each with its `upstream`;
    /// `data` is one bare ticket when the body was one message object with one recipient, as for a send.
    static func expoJSON(_ dryRun: DryRun, unwrapped: Bool) -> JSONValue {
        let tickets = dryRun.notifications.map(\.expoJSON)
        return .object(["dryRun": .bool(true), "data": unwrapped && tickets.count == 1 ? tickets[0] : .array(tickets)])
    }
}

extension DryRun.Notification {
    /// `provider`, `app`, `critical`, `status` (`pending` or `error`), `message`, `details` for an error (as a
    /// ticket's), and `upstream` when it would be sent.
    var nativeJSON: JSONValue {
        var fields: [String: JSONValue] = [
            "provider": .string(provider.rawValue), "app": .string(app), "critical": .bool(critical),
        ]
        switch state {
        case .pending, .ok, .unrecorded:
            fields["status"] = .string("pending")
            fields["message"] = .string(DryRunAPI.wouldBeSent)
        case .error(let code, let message, let removeToken, let retryAfter):
            fields["status"] = .string("error")
            fields["message"] = .string(message)
            var details: [String: JSONValue] = ["error": .string(code.rawValue), "removeToken": .bool(removeToken)]
            if let retryAfter { details["retryAfter"] = .int(Int64(retryAfter)) }
            fields["details"] = .object(details)
        }
        if let upstream { fields["upstream"] = upstream.json }
        return .object(fields)
    }

    /// Expo's ticket (`ok`, or `error` with Expo's code) without an id, and `upstream` when it would be sent.
    var expoJSON: JSONValue {
        var fields: [String: JSONValue]
        switch state {
        case .pending, .ok, .unrecorded:
            fields = ["status": .string("ok"), "message": .string(DryRunAPI.wouldBeSent)]
        case .error(let code, let message, _, _):
            fields = [
                "status": .string("error"), "message": .string(message),
                "details": .object(["error": .string(code.expoCode(message: message))]),
            ]
        }
        if let upstream { fields["upstream"] = upstream.json }
        return .object(fields)
    }
}

extension UpstreamPreview {
    /// `{"method", "path", "headers": {name: value}, "body"}`: the body as JSON when it is JSON (it always is, for
    /// the three providers), else as text. Not the endpoint's URL: that is the operator's set-up (a proxy, an
    /// internal gateway), which a tenant has no need to see.
    var json: JSONValue {
        .object([
            "method": .string(method),
            "path": .string(path),
            "headers": .object(
                Dictionary(
                    headers.map { ($0.name, JSONValue.string($0.value)) }, uniquingKeysWith: { first, _ in first })
            ),
            "body": JSONValue.decode(body) ?? .string(String(decoding: body, as: UTF8.self)),
        ])
    }
}
