import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RelayApplication
import RelayCore
import RelayStore

/// The native API: `POST /v1/push` and `POST /v1/receipts`.
struct NativeAPI: Sendable {
    let relay: Relay

    /// At most this many ids per receipts request.
    static let maxReceiptIDs = 1000

    func addRoutes(to router: RouterGroup<TenantRequestContext>) {
        router.post("/v1/push") { request, context in try await push(request, context: context) }
        router.post("/v1/receipts") { request, context in try await receipts(request, context: context) }
    }

    func push(_ request: Request, context: TenantRequestContext) async throws -> Response {
        let identity = context.identity
        let json = try await readJSONBody(request, limit: relay.settings.maxBodyBytes)
        let parsed: PushRequest
        do {
            parsed = try PushRequest.parse(json, apps: relay.settings.apps)
        } catch {
            throw RelayHTTPError(validation: error)
        }
        let preferences = RequestPreferences(request.headers)
        if parsed.dryRun || preferences.dryRun {
            return try await DryRunAPI.respond(
                parsed.pushes, relay: relay, context: context, preferenceApplied: preferences.dryRun,
                render: DryRunAPI.nativeJSON)
        }
        let acceptance: Relay.Acceptance = preferences.respondAsync ? .asynchronous : .waitForOutcomes
        let result = try await rendered { () async throws(RequestRefusal) in
            try await relay.push(
                parsed.pushes, identity: identity, origin: context.origin, acceptance: acceptance,
                logger: context.logger)
        }
        var headers = result.rateLimit.headers
        if result.asynchronous { headers[.preferenceApplied] = RequestPreferences.respondAsyncToken }
        return jsonResponse(
            bytes: Ticket.nativeJSON(result.tickets), status: result.asynchronous ? .accepted : .ok, headers: headers)
    }

    func receipts(_ request: Request, context: TenantRequestContext) async throws -> Response {
        let identity = context.identity
        let ids = try Self.parseIDs(try await readJSONBody(request, limit: relay.settings.maxBodyBytes))
        let found = try await rendered { () async throws(RequestRefusal) in
            try await relay.receipts(ids: ids, identity: identity)
        }
        return jsonResponse(
            .object([
                "data": .object(
                    Dictionary(found.map { ($0.id, $0.nativeJSON) }, uniquingKeysWith: { first, _ in first }))
            ]))
    }

    /// `{"ids": [...]}` with 1 to 1,000 strings.
    static func parseIDs(_ json: JSONValue) throws(RelayHTTPError) -> [String] {
        switch ReceiptIDs.parse(json, maxIDs: maxReceiptIDs, counting: .elements) {
        case .success(let ids): return ids
        case .failure(let failure): throw RelayHTTPError(validation: failure)
        }
    }
}

extension Receipt {
    /// The native API's receipt JSON.
    var nativeJSON: JSONValue {
        var fields: [String: JSONValue] = [
            "status": .string(status.rawValue), "provider": .string(provider.rawValue),
            "critical": .bool(isCritical), "updatedAt": .string(updatedAt.formatted(.iso8601)), "app": .string(app),
        ]
        if let providerMessageID { fields["providerMessageId"] = .string(providerMessageID) }
        if let liveActivityEvent { fields["liveActivityEvent"] = .string(liveActivityEvent.rawValue) }
        if status == .error {
            if let message { fields["message"] = .string(message) }
            fields["details"] = .object([
                "error": .string(errorCode ?? "ProviderError"), "removeToken": .bool(removeToken),
            ])
        }
        return .object(fields)
    }
}

extension Ticket {
    /// `{"data": [tickets]}`, the native push route's answer, written directly in canonical form (keys in bytewise
    /// order; `NativeTicketJSONTests` checks it against the canonical encoding of a dictionary per ticket), not through
    /// such a dictionary (`relay-bench relay`, batched phase: building and encoding them was about 2 % of the relay's
    /// CPU).
    static func nativeJSON(_ tickets: [Ticket]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 + tickets.count * 96)
        bytes.append(contentsOf: #"{"data":["#.utf8)
        for (index, ticket) in tickets.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            ticket.appendNativeJSON(to: &bytes)
        }
        bytes.append(contentsOf: "]}".utf8)
        return bytes
    }

    /// One ticket, keys in bytewise order: `details`, `id`, `message`, `provider`, `providerMessageId`, `status`.
    private func appendNativeJSON(to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "{"))
        var first = true
        if let error = errorFields {
            CanonicalJSON.appendKey("details", first: true, to: &bytes)
            bytes.append(UInt8(ascii: "{"))
            CanonicalJSON.appendKey("error", first: true, to: &bytes)
            CanonicalJSON.appendString(error.code, to: &bytes)
            CanonicalJSON.appendKey("removeToken", first: false, to: &bytes)
            bytes.append(contentsOf: (error.removeToken ? "true" : "false").utf8)
            if let retryAfter = error.retryAfter {
                CanonicalJSON.appendKey("retryAfter", first: false, to: &bytes)
                CanonicalJSON.appendInteger(Int64(retryAfter), to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
            first = false
        }
        CanonicalJSON.appendKey("id", first: first, to: &bytes)
        CanonicalJSON.appendString(id, to: &bytes)
        if let error = errorFields {
            CanonicalJSON.appendKey("message", first: false, to: &bytes)
            CanonicalJSON.appendString(error.message, to: &bytes)
        }
        CanonicalJSON.appendKey("provider", first: false, to: &bytes)
        CanonicalJSON.appendString(provider.rawValue, to: &bytes)
        if case .ok(let messageID?) = state {
            CanonicalJSON.appendKey("providerMessageId", first: false, to: &bytes)
            CanonicalJSON.appendString(messageID, to: &bytes)
        }
        CanonicalJSON.appendKey("status", first: false, to: &bytes)
        switch state {
        case .ok: CanonicalJSON.appendString("ok", to: &bytes)
        case .pending: CanonicalJSON.appendString("pending", to: &bytes)
        case .error, .unrecorded: CanonicalJSON.appendString("error", to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// An error ticket's `details` and `message`; `nil` for `ok` and `pending`.
    private var errorFields: (code: String, message: String, removeToken: Bool, retryAfter: Int?)? {
        switch state {
        case .error(let code, let message, let removeToken, let retryAfter):
            (code.rawValue, message, removeToken, retryAfter)
        case .unrecorded: (Ticket.unrecordedCode, Ticket.unrecordedMessage, false, nil)
        case .ok, .pending: nil
        }
    }
}

/// The body of every receipts route, `{"ids": [...]}`: read once here for the native, Expo and OneUptime APIs, which
/// differ only in their bound, what it counts, and which ids are well formed.
enum ReceiptIDs {
    enum Counting {
        /// The bound counts the array's elements (the native and Expo APIs).
        case elements
        /// The bound counts distinct ids, duplicates being ignored (OneUptime).
        case distinctIDs
    }

    /// The distinct ids in request order, or the first problem with its field path.
    static func parse(
        _ json: JSONValue,
        maxIDs: Int,
        counting: Counting,
        isWellFormed: (String) -> Bool = { _ in true },
        wellFormed: String = ""
    ) -> Result<[String], ValidationFailure> {
        func fail(_ path: String, _ message: String) -> Result<[String], ValidationFailure> {
            .failure(ValidationFailure(issues: [ValidationIssue(path: path, message: message)]))
        }
        guard case .object(let object) = json else {
            return fail("", "the request body must be an object {\"ids\": […]}")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "ids" }) {
            return fail(unknown, "unknown field '\(unknown)'")
        }
        guard case .array(let elements)? = object["ids"] else {
            return fail("ids", "is required: an array of receipt ids")
        }
        if counting == .elements, !(1...maxIDs).contains(elements.count) {
            return fail("ids", "must hold 1 to \(maxIDs) ids, not \(elements.count)")
        }
        var ids: [String] = []
        var seen: Set<String> = []
        for (index, element) in elements.enumerated() {
            guard let id = element.stringValue else { return fail("ids[\(index)]", "must be a string") }
            guard isWellFormed(id) else { return fail("ids[\(index)]", "must be \(wellFormed)") }
            // An id asked for twice is answered once.
            if seen.insert(id).inserted { ids.append(id) }
        }
        if counting == .distinctIDs, !(1...maxIDs).contains(ids.count) {
            return fail("ids", "must hold 1 to \(maxIDs) distinct ids, not \(ids.count)")
        }
        return .success(ids)
    }
}
