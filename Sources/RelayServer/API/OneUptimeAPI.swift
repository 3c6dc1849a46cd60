import HTTPTypes
import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

/// The OneUptime-compatible API: the body OneUptime's self-hosted installs send to their push relay and the answers
/// they read (PROTOCOLS.md §4.1), on both of OneUptime's paths. The tenant key comes as Bearer or, because those
/// installs can only be given a URL, in the path (`/t/<key>/…`, taken out by ``RelayResponder``); it is never logged.
///
/// | Outcome | Status | Body |
/// |---|---|---|
/// | accepted (delivered, or pending at the wait deadline) | 200 | `{"success":true,"receiptId":"…"}` |
/// | accepted asynchronously (`Prefer: respond-async`): journaled, not sent yet | 202 | the same |
/// | dead token | 410 | `{"message":"…","details":{"error":"DeviceNotRegistered"}}` |
/// | any other refusal of the message | 422 | `{"message":"…","details":{"error":"<Expo's code>"}}` |
/// | invalid input, provider not configured | 400 | `{"error":"…"}` |
/// | tenant rate limit | 429 | `{"message":"Rate limit exceeded. Please try again later."}` and `Retry-After` |
/// | upstream unavailable | 500 | `{"error":"Server Error"}` |
struct OneUptimeAPI: Sendable {
    let relay: Relay

    /// The paths OneUptime posts to: its own relay's, and the short alias.
    static let bases = ["/api/notification/push-relay", "/push-relay"]

    /// The fields OneUptime sends; `isCriticalAlert` is in its RFC (the relay accepts and forwards it), under the
    /// same critical-alert policy as the native route's.
    static let fields: Set<String> = [
        "to", "title", "body", "data", "sound", "priority", "channelId", "interruptionLevel", "isCriticalAlert",
    ]

    /// OneUptime's own relay shortens title, body and string data values to this many bytes rather than refusing.
    static let maxTextBytes = 3072

    /// Receipt ids per lookup, and their shape (the relay's ids are UUIDs; OneUptime accepts these).
    static let maxReceiptIDs = 300
    static let maxReceiptIDBytes = 128

    /// OneUptime's answer to a rate-limited request, word for word.
    static let rateLimitedMessage = "Rate limit exceeded. Please try again later."

    func addRoutes(to router: RouterGroup<TenantRequestContext>) {
        for base in Self.bases {
            router.post(RouterPath(base + "/send")) { request, context in try await send(request, context: context) }
            router.post(RouterPath(base + "/receipts")) { request, context in
                try await receipts(request, context: context)
            }
        }
    }

    // MARK: - Send

    func send(_ request: Request, context: TenantRequestContext) async throws -> Response {
        let identity = context.identity
        let json: JSONValue
        switch try await body(of: request, context) {
        case .json(let read): json = read
        case .refused(let answer): return answer
        }
        guard case .object(var object) = json else { return await invalid("the body must be a JSON object", context) }
        if let unknown = object.keys.sorted().first(where: { !Self.fields.contains($0) }) {
            return await invalid("unknown field '\(unknown)'", context)
        }
        Self.shortenTexts(&object)
        var issues: [ValidationIssue] = []
        guard let message = PushMessage.parse(.object(object), at: .root, issues: &issues) else {
            return await invalid(issues.map(\.description).joined(separator: "; "), context)
        }
        // Typed errors as a Result: a `catch … where` on a typed throw crashes the Swift 6.3 compiler (SILGen).
        let acceptance: Relay.Acceptance =
            RequestPreferences(request.headers).respondAsync ? .asynchronous : .waitForOutcomes
        let result: Result<Relay.PushResult, RequestRefusal>
        do {
            result = .success(
                try await relay.push(
                    message.pushes, identity: identity, origin: context.origin, acceptance: acceptance,
                    logger: context.logger)
            )
        } catch {
            result = .failure(error)
        }
        switch result {
        case .success(let pushed):
            // OneUptime's answer has no per-notification status: an unrecorded one is the request's 503.
            if pushed.tickets.contains(where: { $0.state == .unrecorded }) { throw RelayHTTPError(.unrecorded) }
            return Self.answer(pushed.tickets, headers: pushed.rateLimit.headers, asynchronous: pushed.asynchronous)
        case .failure(let refusal):
            let error = RelayHTTPError(refusal)
            switch refusal {
            case .rateLimited(let retryAfter, _, _), .receiptLookupsExhausted(let retryAfter):
                await relay.recordRefusal(error, origin: context.origin, subject: RefusalSubject(context.identity))
                return Self.rateLimited(retryAfter: retryAfter)
            case .exceedsBurst:
                return await invalid(error.entries.first?.message ?? "invalid request", context)
            case .shuttingDown, .storeUnavailable, .unrecorded, .queueFull:
                throw error
            }
        }
    }

    /// The answer for a send's tickets. OneUptime sends one token per request; with several, the first refusal
    /// decides the status, and a success names the first ticket: 200, or 202 with `Preference-Applied` when the
    /// notifications were accepted `asynchronously` (journaled; their outcomes arrive on the receipts).
    static func answer(_ tickets: [Ticket], headers: HTTPFields, asynchronous: Bool = false) -> Response {
        for ticket in tickets {
            guard case .error(let code, let message, _, _) = ticket.state else { continue }
            let expoCode = code.expoCode(message: message)
            switch code {
            case .providerNotConfigured:
                return jsonResponse(
                    .object(["error": .string("Push relay is not configured. \(message)")]),
                    status: .badRequest,
                    headers: headers
                )
            case .providerUnavailable:
                // OneUptime logs a 500 and never retries it; the receipt keeps the reason.
                return jsonResponse(
                    .object(["error": .string("Server Error")]), status: .internalServerError, headers: headers)
            default:
                let status: HTTPResponse.Status = expoCode == "DeviceNotRegistered" ? .gone : .unprocessableContent
                return jsonResponse(
                    .object(["message": .string(message), "details": .object(["error": .string(expoCode)])]),
                    status: status,
                    headers: headers
                )
            }
        }
        var body: [String: JSONValue] = ["success": .bool(true)]
        if let first = tickets.first { body["receiptId"] = .string(first.id) }
        guard asynchronous else { return jsonResponse(.object(body), headers: headers) }
        var accepted = headers
        accepted[.preferenceApplied] = RequestPreferences.respondAsyncToken
        return jsonResponse(.object(body), status: .accepted, headers: accepted)
    }

    /// Shortens `title`, `body` and the string values of `data` to ``maxTextBytes`` on a UTF-8 boundary.
    static func shortenTexts(_ object: inout [String: JSONValue]) {
        for field in ["title", "body"] {
            if case .string(let text)? = object[field] { object[field] = .string(shortened(text)) }
        }
        if case .object(var data)? = object["data"] {
            for (key, value) in data {
                if case .string(let text) = value { data[key] = .string(shortened(text)) }
            }
            object["data"] = .object(data)
        }
    }

    /// `text` cut to at most ``maxTextBytes`` bytes of UTF-8, never inside a character's encoding.
    static func shortened(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.count > maxTextBytes else { return text }
        var end = utf8.index(utf8.startIndex, offsetBy: maxTextBytes)
        // Step back over continuation bytes (10xxxxxx) to the start of the character that did not fit.
        while end > utf8.startIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return String(decoding: utf8[..<end], as: UTF8.self)
    }

    // MARK: - Receipts

    func receipts(_ request: Request, context: TenantRequestContext) async throws -> Response {
        let identity = context.identity
        let json: JSONValue
        switch try await body(of: request, context) {
        case .json(let read): json = read
        case .refused(let answer): return answer
        }
        let ids: [String]
        switch Self.parseReceiptIDs(json) {
        case .success(let parsed): ids = parsed
        case .failure(let failure):
            return await invalid(failure.issues.map(\.description).joined(separator: "; "), context)
        }
        let found: [Receipt]
        do {
            found = try await relay.receipts(ids: ids, identity: identity)
        } catch {
            guard case .receiptLookupsExhausted(let retryAfter) = error else { throw RelayHTTPError(error) }
            return Self.rateLimited(retryAfter: retryAfter)
        }
        // Receipts not final yet are left out, as are unknown ids and other tenants' (absent from `found`).
        var receipts: [String: JSONValue] = [:]
        for receipt in found where receipt.status != .pending { receipts[receipt.id] = receipt.expoJSON }
        return jsonResponse(.object(["receipts": .object(receipts)]))
    }

    /// `{"ids":[…]}`: 1 to 300 distinct ids of 1 to 128 characters from `A-Z a-z 0-9 -`.
    static func parseReceiptIDs(_ json: JSONValue) -> Result<[String], ValidationFailure> {
        ReceiptIDs.parse(
            json,
            maxIDs: maxReceiptIDs,
            counting: .distinctIDs,
            isWellFormed: { (1...maxReceiptIDBytes).contains($0.utf8.count) && $0.utf8.allSatisfy(isReceiptIDByte) },
            wellFormed: "1 to \(maxReceiptIDBytes) characters of A-Z, a-z, 0-9 and -"
        )
    }

    private static func isReceiptIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }

    // MARK: - Helpers

    /// OneUptime's 429, with the relay's `Retry-After` (which OneUptime ignores, but a person reading its log may not).
    static func rateLimited(retryAfter: Int) -> Response {
        var headers = HTTPFields()
        headers[.retryAfter] = String(retryAfter)
        return jsonResponse(
            .object(["message": .string(rateLimitedMessage)]), status: .tooManyRequests, headers: headers)
    }

    enum Body {
        case json(JSONValue)
        /// OneUptime's 400, already audited.
        case refused(Response)
    }

    /// The request's JSON; a body that is not JSON gets OneUptime's 400, and other failures (413, 415) are thrown.
    func body(of request: Request, _ context: TenantRequestContext) async throws -> Body {
        do {
            return .json(try await readJSONBody(request, limit: relay.settings.maxBodyBytes))
        } catch {
            guard error.status == .badRequest else { throw error }
            return .refused(await invalid(error.entries.first?.message ?? "invalid body", context))
        }
    }

    /// OneUptime's 400 for an invalid request, after its audit record.
    func invalid(_ message: String, _ context: TenantRequestContext) async -> Response {
        await relay.recordRefusal(
            RelayHTTPError(.badRequest, code: .validationError, message: message),
            origin: context.origin,
            subject: RefusalSubject(context.identity)
        )
        return jsonResponse(.object(["error": .string(message)]), status: .badRequest)
    }
}
