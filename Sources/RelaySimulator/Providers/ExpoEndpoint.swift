internal import Foundation

/// The Expo push service: `POST /--/api/v2/push/send` and `POST /--/api/v2/push/getReceipts` (PROTOCOLS.md §3).
///
/// A send is answered by the first rule it breaks, in this order:
/// 1. wrong method: 405;
/// 2. ``ProviderSimulator/Configuration/errorRate``: whole-request 503 `INTERNAL_SERVER_ERROR`, `isTransient`;
/// 3. with an access token configured, `authorization: Bearer <it>`, else 401 `UNAUTHORIZED`;
/// 4. the body, whole-request 400: a message object or a non-empty array of them (`VALIDATION_ERROR`); at most 100
///    recipients, counting every `to` array (`PUSH_TOO_MANY_NOTIFICATIONS`); each message a `to` string or non-empty
///    array of strings, `data` an object, `priority` `default`/`normal`/`high`, `ttl`/`expiration`/`badge` numbers,
///    text fields strings (`VALIDATION_ERROR`); a `content-encoding` the simulator cannot read (`VALIDATION_ERROR`);
/// 5. scripted faults of the recipients' tokens, in recipient order (the body must be read to find them, so unlike
///    APNs and FCM this comes after the body checks): 503, 429 (`retry-after: 1`) or 500;
/// 6. one ticket per recipient in request order: a `to` that is not `ExponentPushToken[…]`/`ExpoPushToken[…]` (inner
///    text `[A-Za-z0-9_-]+`) gets `DeviceNotRegistered`, so do `0410…` and `0400…`; `0403…` gets `MismatchSenderId`;
///    `0413…` and a message over 4096 bytes (without `to`) get `MessageTooBig`; everything else is `ok` with a new
///    ticket ID whose receipt is `ok` (`DeviceNotRegistered` for `0610…`), and the message becomes the `to`'s
///    ``ProviderSimulator/lastPayload(for:)``.
///
/// The answer is `{"data": [tickets]}`, or `{"data": ticket}` when the body was one message object with a single
/// string `to` (Expo's own behaviour, PROTOCOLS.md §3.2). Receipts are `{"data": {id: receipt}}` for the known ids
/// among at most 1000 (`PUSH_TOO_MANY_RECEIPTS`); unknown ids are absent.
struct ExpoEndpoint: Sendable {
    let configuration: ProviderSimulator.Configuration.Expo

    /// One recipient of a send: the `to` text, and the scripted token inside its brackets when it is well formed.
    struct Recipient: Sendable, Hashable {
        var to: String
        /// The text inside the brackets, or `nil` when `to` is not a valid Expo push token.
        var token: String?
        /// Whether its message is over the size limit.
        var messageTooBig: Bool
        /// Its message as JSON text, the token's last payload should its ticket be `ok`.
        var message: [UInt8] = []
    }

    /// A whole-request error: `{"errors": [{"code", "message", "isTransient"?}]}`.
    struct ExpoError: Sendable, Hashable {
        var status: Int
        var code: String
        var message: String
        var isTransient: Bool? = nil

        static func validation(_ message: String) -> ExpoError {
            ExpoError(status: 400, code: "VALIDATION_ERROR", message: message)
        }

        static let unauthorized = ExpoError(
            status: 401, code: "UNAUTHORIZED",
            message: "The bearer token is invalid, or this project requires an access token (enhanced push security).")
        static let serviceUnavailable = ExpoError(
            status: 503, code: "INTERNAL_SERVER_ERROR", message: "The service is temporarily unavailable.",
            isTransient: true)
        static let internalFailure = ExpoError(
            status: 500, code: "INTERNAL_SERVER_ERROR", message: "An unknown error occurred.", isTransient: true)
        static let tooManyRequests = ExpoError(
            status: 429, code: "TOO_MANY_REQUESTS",
            message: "This project is sending too many notifications at once; retry later.")

        var response: HTTP2TestResponse {
            var error: [(key: String, value: SimulatorJSON)] = [
                ("code", .string(self.code)), ("message", .string(self.message)),
            ]
            if let isTransient = self.isTransient {
                error.append(("isTransient", .bool(isTransient)))
            }
            let body: SimulatorJSON = ["errors": [.object(error)]]
            let headers = self.status == 429 ? [(name: "retry-after", value: String(scriptedRetryAfterSeconds))] : []
            return .json(self.status, body.text, headers: headers)
        }
    }

    /// What the decision needs from a send, worked out without the simulator's state.
    struct SendInspection: Sendable {
        var authorized = true
        var recipients: [Recipient] = []
        /// One message object (not an array) with a single string `to`: answer with a bare ticket.
        var isSingleMessage = false
        var rejection: ExpoError?
        var immediate: HTTP2TestResponse?
    }

    /// What the decision needs from a receipts request.
    struct ReceiptsInspection: Sendable {
        var authorized = true
        var ids: [String] = []
        var rejection: ExpoError?
        var immediate: HTTP2TestResponse?
    }

    func inspectSend(_ request: HTTP2TestRequest) -> SendInspection {
        var inspection = SendInspection()
        guard request.method == "POST" else {
            inspection.immediate = ExpoError(status: 405, code: "API_ERROR", message: "Use POST.").response
            return inspection
        }
        inspection.authorized = self.isAuthorized(request)
        if let encoding = request.header("content-encoding"), encoding.lowercased() != "identity" {
            inspection.rejection = .validation("The simulator cannot read a \(encoding) request body; send it plain.")
            return inspection
        }
        guard let body = SimulatorJSON(parsing: request.body) else {
            inspection.rejection = .validation("The request body is not valid JSON.")
            return inspection
        }
        let messages: [SimulatorJSON]
        switch body {
        case .object: messages = [body]
        case .array(let elements) where !elements.isEmpty && elements.allSatisfy({ $0.objectValue != nil }):
            messages = elements
        default:
            inspection.rejection = .validation("\"value\" must be a push message object or a non-empty array of them.")
            return inspection
        }
        var recipients: [Recipient] = []
        for (index, message) in messages.enumerated() {
            let addresses: [SimulatorJSON]
            switch message["to"] {
            case .string?: addresses = [message["to"] ?? .null]
            case .array(let list)? where !list.isEmpty: addresses = list
            default:
                inspection.rejection = .validation(
                    "\"[\(index)].to\" must be a push token or a non-empty array of them.")
                return inspection
            }
            var withoutTo = message
            if case .object(let members) = message {
                withoutTo = .object(members.filter { $0.key != "to" })
            }
            let tooBig = withoutTo.bytes.count > maxMessageBytes
            let text = message.bytes
            for address in addresses {
                guard let to = address.stringValue else {
                    inspection.rejection = .validation("\"[\(index)].to\" must contain only strings.")
                    return inspection
                }
                recipients.append(Recipient(to: to, token: expoTokenContent(to), messageTooBig: tooBig, message: text))
            }
        }
        guard recipients.count <= maxRecipients else {
            inspection.rejection = ExpoError(
                status: 400, code: "PUSH_TOO_MANY_NOTIFICATIONS",
                message: "You are trying to send more than \(maxRecipients) push notifications in one request.")
            return inspection
        }
        for (index, message) in messages.enumerated() {
            if let problem = Self.fieldProblem(message, index: index) {
                inspection.rejection = .validation(problem)
                return inspection
            }
        }
        inspection.recipients = recipients
        inspection.isSingleMessage = body.objectValue != nil && body["to"]?.stringValue != nil
        return inspection
    }

    /// The first ill-typed field of a message.
    private static func fieldProblem(_ message: SimulatorJSON, index: Int) -> String? {
        if let data = message["data"], data.objectValue == nil {
            return "\"[\(index)].data\" must be an object."
        }
        if let priority = message["priority"], !["default", "normal", "high"].contains(priority.stringValue ?? "") {
            return "\"[\(index)].priority\" must be one of [default, normal, high]."
        }
        for field in ["ttl", "expiration", "badge"] {
            if let value = message[field], value.numberValue == nil {
                return "\"[\(index)].\(field)\" must be a number."
            }
        }
        for field in ["title", "body", "subtitle", "channelId", "categoryId", "interruptionLevel"] {
            if let value = message[field], value.stringValue == nil, value != .null {
                return "\"[\(index)].\(field)\" must be a string."
            }
        }
        if let sound = message["sound"], sound.stringValue == nil, sound.objectValue == nil, sound != .null {
            return "\"[\(index)].sound\" must be a string, an object or null."
        }
        return nil
    }

    func inspectReceipts(_ request: HTTP2TestRequest) -> ReceiptsInspection {
        var inspection = ReceiptsInspection()
        guard request.method == "POST" else {
            inspection.immediate = ExpoError(status: 405, code: "API_ERROR", message: "Use POST.").response
            return inspection
        }
        inspection.authorized = self.isAuthorized(request)
        guard let ids = SimulatorJSON(parsing: request.body)?["ids"]?.arrayValue else {
            inspection.rejection = .validation("\"ids\" is required and must be an array of ticket IDs.")
            return inspection
        }
        guard ids.count <= maxReceiptIDs else {
            inspection.rejection = ExpoError(
                status: 400, code: "PUSH_TOO_MANY_RECEIPTS",
                message: "You are trying to get more than \(maxReceiptIDs) push receipts in one request.")
            return inspection
        }
        let strings = ids.compactMap(\.stringValue)
        guard strings.count == ids.count else {
            inspection.rejection = .validation("\"ids\" must contain only strings.")
            return inspection
        }
        inspection.ids = strings
        return inspection
    }

    private func isAuthorized(_ request: HTTP2TestRequest) -> Bool {
        guard let expected = self.configuration.accessToken else {
            return true
        }
        return request.header("authorization").flatMap(bearerCredential) == Substring(expected)
    }

    /// An error ticket (or receipt) for `recipient`.
    static func errorTicket(_ error: String, message: String, to: String) -> SimulatorJSON {
        [
            "status": "error",
            "message": .string(message),
            "details": ["error": .string(error), "expoPushToken": .string(to)],
        ]
    }

    static func notRegistered(_ to: String) -> SimulatorJSON {
        errorTicket(
            "DeviceNotRegistered", message: "\"\(to)\" is not a registered push notification recipient", to: to)
    }
}

extension ProviderSimulator.State {
    /// Decides the answer to an inspected Expo send (see ``ExpoEndpoint`` for the order of the rules), remembering
    /// the receipt of every `ok` ticket.
    mutating func expoSendArrived(_ inspection: ExpoEndpoint.SendInspection, transientError: Bool) -> HTTP2TestResponse
    {
        if let immediate = inspection.immediate {
            return immediate
        }
        if transientError {
            return ExpoEndpoint.ExpoError.serviceUnavailable.response
        }
        guard inspection.authorized else {
            return ExpoEndpoint.ExpoError.unauthorized.response
        }
        if let rejection = inspection.rejection {
            return rejection.response
        }
        // Every scripted recipient's counter advances; the first fault in recipient order answers.
        var firstFault: ScriptedFault?
        for recipient in inspection.recipients {
            guard let token = recipient.token,
                let fault = self.scriptedFault(provider: .expoSend, token: token), fault != .credentialExpired
            else {
                continue
            }
            firstFault = firstFault ?? fault
        }
        switch firstFault {
        case .serviceUnavailable?: return ExpoEndpoint.ExpoError.serviceUnavailable.response
        case .throttled?: return ExpoEndpoint.ExpoError.tooManyRequests.response
        case .internalError?: return ExpoEndpoint.ExpoError.internalFailure.response
        case .credentialExpired?, nil: break
        }
        let tickets = inspection.recipients.map { self.expoTicket(for: $0) }
        let body: SimulatorJSON = [
            "data": inspection.isSingleMessage && tickets.count == 1 ? tickets[0] : .array(tickets)
        ]
        return .json(200, body.text)
    }

    private mutating func expoTicket(for recipient: ExpoEndpoint.Recipient) -> SimulatorJSON {
        guard let token = recipient.token else {
            return ExpoEndpoint.notRegistered(recipient.to)
        }
        let script = ScriptedToken(token: token)
        switch script {
        case .dead?, .invalid?:
            return ExpoEndpoint.notRegistered(recipient.to)
        case .wrongSender?:
            return ExpoEndpoint.errorTicket(
                "MismatchSenderId",
                message: "The push credentials of this project do not match the sender ID of the token.",
                to: recipient.to)
        case .tooBig?:
            return tooBigTicket(recipient.to)
        default:
            if recipient.messageTooBig {
                return tooBigTicket(recipient.to)
            }
        }
        self.lastPayloads.record(SimulatedPayload(provider: .expoSend, body: recipient.message), for: recipient.to)
        let id = UUID().uuidString.lowercased()
        switch script {
        case .receiptDead?: self.expoReceipts[id] = ExpoEndpoint.notRegistered(recipient.to)
        case .badCredentials?:
            self.expoReceipts[id] = ExpoEndpoint.errorTicket(
                "InvalidCredentials",
                message: "Could not find APNs credentials for this project; upload them or correct them.",
                to: recipient.to)
        default: self.expoReceipts[id] = ["status": "ok"]
        }
        return ["status": "ok", "id": .string(id)]
    }

    /// Answers a receipts request from the remembered receipts.
    func expoReceiptsRequested(_ inspection: ExpoEndpoint.ReceiptsInspection) -> HTTP2TestResponse {
        if let immediate = inspection.immediate {
            return immediate
        }
        guard inspection.authorized else {
            return ExpoEndpoint.ExpoError.unauthorized.response
        }
        if let rejection = inspection.rejection {
            return rejection.response
        }
        var seen: Set<String> = []
        var receipts: [(key: String, value: SimulatorJSON)] = []
        for id in inspection.ids where seen.insert(id).inserted {
            if let receipt = self.expoReceipts[id] {
                receipts.append((key: id, value: receipt))
            }
        }
        let body: SimulatorJSON = ["data": .object(receipts)]
        return .json(200, body.text)
    }
}

private func tooBigTicket(_ to: String) -> SimulatorJSON {
    ExpoEndpoint.errorTicket(
        "MessageTooBig", message: "The notification payload exceeds the \(maxMessageBytes)-byte limit.", to: to)
}

/// The text inside the brackets of `ExponentPushToken[…]` or `ExpoPushToken[…]`, when it is `[A-Za-z0-9_-]+`.
func expoTokenContent(_ to: String) -> String? {
    for prefix in ["ExponentPushToken[", "ExpoPushToken["] where to.hasPrefix(prefix) && to.hasSuffix("]") {
        let inner = to.dropFirst(prefix.count).dropLast()
        let allowed = inner.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || scalar == "_" || scalar == "-"
        }
        return !inner.isEmpty && allowed ? String(inner) : nil
    }
    return nil
}

/// Expo: at most 100 recipients per send.
private let maxRecipients = 100
/// Expo: at most 1000 ids per receipts request.
private let maxReceiptIDs = 1000
/// Expo: the provider payload must be at most 4096 bytes.
private let maxMessageBytes = 4096
