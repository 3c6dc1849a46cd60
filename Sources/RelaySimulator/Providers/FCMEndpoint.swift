internal import Foundation

/// FCM HTTP v1 send, `POST /v1/projects/{project}/messages:send` (PROTOCOLS.md §2).
///
/// A request is answered by the first rule it breaks, in this order:
/// 1. wrong method or path: 405 / 404 `NOT_FOUND`;
/// 2. ``ProviderSimulator/Configuration/errorRate``: 503 `UNAVAILABLE`;
/// 3. `authorization: Bearer <token>` with a token from ``FCMTokenEndpoint`` that has not expired, else 401
///    `UNAUTHENTICATED` without an `FcmError` detail (the "refresh your OAuth token" 401);
/// 4. the project in the path must be the configured one, else 403 `PERMISSION_DENIED` without an `FcmError`;
/// 5. scripted faults of `message.token` (``ScriptedToken``);
/// 6. the body, all 400 `INVALID_ARGUMENT` with an `FcmError` `INVALID_ARGUMENT`: a JSON object whose only members
///    are `message` and `validate_only`/`validateOnly`; `message` an object with only known members and exactly one
///    of `token`, `topic` (without `/topics/`), `condition`; `data` (and `android.data`) an object of strings with no
///    reserved key (`from`, `message_type`, `google.…`, `gcm.notification.…`); `android.priority` `NORMAL` or `HIGH`;
///    `android.ttl` a duration like `"3600s"` of at most 4 weeks; `android.direct_boot_ok` a boolean;
///    `android.notification` an `AndroidNotification`: only its members (snake_case or lowerCamelCase, as protobuf's
///    JSON mapping reads them), each of its type: strings, string arrays (`title_loc_args`, `body_loc_args`),
///    booleans, `notification_count` an int32, `visibility` and `notification_priority` (and `proxy`) one of their
///    enum names, `color` `#rrggbb` (as the Firebase Admin SDKs check it); `notification` plus `data` at most 4096
///    bytes;
/// 7. scripted outcomes of `message.token` (`0410`, `0400`, `0403`, `0413`);
/// 8. success: 200 `{"name": "projects/<id>/messages/<id>"}` (`…/fake_message_id` for `validate_only`); the
///    `message` becomes the token's ``ProviderSimulator/lastPayload(for:)`` (not for `validate_only`, which sends
///    nothing).
///
/// Errors are `google.rpc.Status` bodies:
/// `{"error":{"code":…,"message":…,"status":…,"details":[{"@type":"…FcmError","errorCode":…}]}}`.
struct FCMEndpoint: Sendable {
    let configuration: ProviderSimulator.Configuration.FCM

    /// What the decision needs from a request, worked out without the simulator's state.
    struct Inspection: Sendable {
        /// The project in the path.
        var projectID: String = ""
        /// The bearer credential, if any.
        var accessToken: String?
        /// `message.token`, when it is a string: the token scripts look at.
        var deviceToken: String?
        var validateOnly = false
        /// The first problem with the body.
        var rejection: FCMError?
        /// `message` as the token's last payload, should FCM accept it.
        var payload: SimulatedPayload?
        /// An answer that needs neither credentials nor state (wrong method or path).
        var immediate: HTTP2TestResponse?
    }

    /// One `google.rpc.Status` error.
    struct FCMError: Sendable, Hashable {
        var code: Int
        var status: String
        var message: String
        /// The `FcmError` detail's `errorCode`; `nil` for errors from Google's front end (401, 403 on the project).
        var errorCode: String?

        static func invalidArgument(_ message: String) -> FCMError {
            FCMError(code: 400, status: "INVALID_ARGUMENT", message: message, errorCode: "INVALID_ARGUMENT")
        }

        static let unauthenticated = FCMError(
            code: 401,
            status: "UNAUTHENTICATED",
            message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or "
                + "other valid authentication credential.",
            errorCode: nil
        )
        static let unavailable = FCMError(
            code: 503, status: "UNAVAILABLE", message: "The service is currently unavailable.", errorCode: "UNAVAILABLE"
        )
        static let quotaExceeded = FCMError(
            code: 429, status: "RESOURCE_EXHAUSTED", message: "Quota exceeded for sending messages.",
            errorCode: "QUOTA_EXCEEDED")
        static let internalFailure = FCMError(
            code: 500, status: "INTERNAL", message: "Internal error encountered.", errorCode: "INTERNAL")
        static let unregistered = FCMError(
            code: 404, status: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED")
        static let senderIDMismatch = FCMError(
            code: 403, status: "PERMISSION_DENIED", message: "SenderId mismatch", errorCode: "SENDER_ID_MISMATCH")
        // Named after FCM's THIRD_PARTY_AUTH_ERROR code.
        // swift-format-ignore: DontRepeatTypeInStaticProperties
        static let thirdPartyAuthError = FCMError(
            code: 401, status: "UNAUTHENTICATED", message: "Auth error from APNS or Web Push Service",
            errorCode: "THIRD_PARTY_AUTH_ERROR")
        static let invalidRegistrationToken = invalidArgument(
            "The registration token is not a valid FCM registration token")
        static let tooBig = invalidArgument("Message is too big")

        static func permissionDenied(project: String) -> FCMError {
            FCMError(
                code: 403,
                status: "PERMISSION_DENIED",
                message: "Permission 'cloudmessaging.messages.create' denied on resource "
                    + "'//cloudmessaging.googleapis.com/projects/\(project)' (or it may not exist).",
                errorCode: nil
            )
        }

        /// The answer: a `google.rpc.Status` body, plus `retry-after` for scripted throttling.
        var response: HTTP2TestResponse {
            var error: [(key: String, value: SimulatorJSON)] = [
                ("code", .number(Double(self.code))), ("message", .string(self.message)),
                ("status", .string(self.status)),
            ]
            if let errorCode = self.errorCode {
                let detail: SimulatorJSON = [
                    "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": .string(errorCode),
                ]
                error.append(("details", [detail]))
            }
            let body: SimulatorJSON = ["error": .object(error)]
            let headers = self.code == 429 ? [(name: "retry-after", value: String(scriptedRetryAfterSeconds))] : []
            return .json(self.code, body.text, headers: headers)
        }
    }

    /// Inspects `request`, whose path has already been routed here; `projectID` is `nil` for a path under `/v1/`
    /// that is not `/v1/projects/{id}/messages:send`.
    func inspect(_ request: HTTP2TestRequest, projectID: Substring?) -> Inspection {
        var inspection = Inspection()
        guard let projectID else {
            inspection.immediate =
                FCMError(
                    code: 404, status: "NOT_FOUND", message: "The requested URL was not found on this server.",
                    errorCode: nil
                ).response
            return inspection
        }
        guard request.method == "POST" else {
            inspection.immediate =
                FCMError(
                    code: 405, status: "UNIMPLEMENTED", message: "Only POST is supported.", errorCode: nil
                ).response
            return inspection
        }
        inspection.projectID = String(projectID)
        inspection.accessToken = request.header("authorization").flatMap(bearerCredential).map(String.init)
        let body = SimulatorJSON(parsing: request.body)
        inspection.deviceToken = body?["message"]?["token"]?.stringValue
        inspection.validateOnly = (body?["validate_only"] ?? body?["validateOnly"])?.boolValue ?? false
        inspection.rejection = Self.validate(body)
        if inspection.rejection == nil, let message = body?["message"] {
            inspection.payload = SimulatedPayload(provider: .fcm, body: message.bytes)
        }
        return inspection
    }

    /// The body's first problem, in the order documented on the type.
    static func validate(_ body: SimulatorJSON?) -> FCMError? {
        guard let body, let members = body.objectValue else {
            return .invalidArgument("Invalid JSON payload received. Expected a JSON object.")
        }
        if let unknown = members.first(where: { !requestFields.contains($0.key) }) {
            return .invalidArgument(
                "Invalid JSON payload received. Unknown name \"\(unknown.key)\": Cannot find field.")
        }
        if let validateOnly = body["validate_only"] ?? body["validateOnly"], validateOnly.boolValue == nil {
            return .invalidArgument("Invalid value at 'validate_only' (TYPE_BOOL)")
        }
        guard let message = body["message"], let messageMembers = message.objectValue else {
            return .invalidArgument("Request contains an invalid argument: message is required.")
        }
        if let unknown = messageMembers.first(where: { !messageFields.contains($0.key) }) {
            return .invalidArgument(
                "Invalid JSON payload received. Unknown name \"\(unknown.key)\" at 'message': Cannot find field.")
        }
        let targets = ["token", "topic", "condition"].filter { message[$0] != nil }
        guard targets.count == 1, let target = message[targets[0]]?.stringValue, !target.isEmpty else {
            return .invalidArgument(
                targets.isEmpty
                    ? "Recipient of the message is not set."
                    : "Exactly one of token, topic or condition must be set, as a non-empty string.")
        }
        if targets[0] == "topic", target.hasPrefix("/topics/") {
            return .invalidArgument("Invalid topic name: remove the \"/topics/\" prefix.")
        }
        if let problem = Self.dataProblem(message["data"], at: "message.data") {
            return problem
        }
        if let notification = message["notification"], notification.objectValue == nil {
            return .invalidArgument("Invalid value at 'message.notification': expected an object.")
        }
        if let android = message["android"] {
            if let problem = Self.androidProblem(android) {
                return problem
            }
        }
        if let apns = message["apns"] {
            if apns.objectValue == nil || (apns["headers"].map { $0.objectValue == nil } ?? false)
                || (apns["payload"].map { $0.objectValue == nil } ?? false)
            {
                return .invalidArgument("Invalid value at 'message.apns': expected headers and payload objects.")
            }
            if let headers = apns["headers"]?.objectValue, headers.contains(where: { $0.value.stringValue == nil }) {
                return .invalidArgument("Invalid value at 'message.apns.headers': values must be strings.")
            }
        }
        let size = (message["notification"]?.bytes.count ?? 0) + (message["data"]?.bytes.count ?? 0)
        if size > maxPayloadBytes {
            return .tooBig
        }
        return nil
    }

    private static func androidProblem(_ android: SimulatorJSON) -> FCMError? {
        guard android.objectValue != nil else {
            return .invalidArgument("Invalid value at 'message.android': expected an object.")
        }
        if let priority = android["priority"], !(priority == "NORMAL" || priority == "HIGH") {
            return .invalidArgument(
                "Invalid value at 'message.android.priority' "
                    + "(type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), \(priority.text)")
        }
        if let ttl = android["ttl"], !(ttl.stringValue.map(isValidTTL) ?? false) {
            return .invalidArgument(
                "Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), \(ttl.text)")
        }
        if let directBootOK = android["direct_boot_ok"] ?? android["directBootOk"], directBootOK.boolValue == nil {
            return .invalidArgument(
                "Invalid value at 'message.android.direct_boot_ok' (TYPE_BOOL), \(directBootOK.text)")
        }
        if let problem = Self.dataProblem(android["data"], at: "message.android.data") {
            return problem
        }
        if let notification = android["notification"] {
            return Self.androidNotificationProblem(notification)
        }
        return nil
    }

    /// An `AndroidNotification`: known members only, each of its type (see the type's rule 6).
    private static func androidNotificationProblem(_ notification: SimulatorJSON) -> FCMError? {
        guard let members = notification.objectValue else {
            return .invalidArgument("Invalid value at 'message.android.notification': expected an object.")
        }
        for (key, value) in members {
            guard let field = androidNotificationFields[key] else {
                return .invalidArgument(
                    "Invalid JSON payload received. Unknown name \"\(key)\" at 'message.android.notification': "
                        + "Cannot find field.")
            }
            if !field.type.accepts(value) {
                return .invalidArgument(
                    "Invalid value at 'message.android.notification.\(field.name)' (\(field.type.name)), \(value.text)")
            }
        }
        return nil
    }

    /// A `map<string,string>` with no reserved keys.
    private static func dataProblem(_ data: SimulatorJSON?, at field: String) -> FCMError? {
        guard let data else {
            return nil
        }
        guard let members = data.objectValue else {
            return .invalidArgument("Invalid value at '\(field)': expected a map of strings.")
        }
        for (index, member) in members.enumerated() {
            guard member.value.stringValue != nil else {
                return .invalidArgument(
                    "Invalid value at '\(field)[\(index)].value' (TYPE_STRING), \(member.value.text)")
            }
            if reservedDataKeys.contains(member.key) || reservedDataKeyPrefixes.contains(where: member.key.hasPrefix) {
                return .invalidArgument("Invalid data payload key: \(member.key)")
            }
        }
        return nil
    }
}

extension ProviderSimulator.State {
    /// Decides the answer to an inspected FCM send (see ``FCMEndpoint`` for the order of the rules).
    mutating func fcmSendArrived(
        _ inspection: FCMEndpoint.Inspection,
        projectID configuredProject: String,
        transientError: Bool,
        now: Date
    ) -> HTTP2TestResponse {
        if let immediate = inspection.immediate {
            return immediate
        }
        if transientError {
            return FCMEndpoint.FCMError.unavailable.response
        }
        guard let accessToken = inspection.accessToken, let expiry = self.fcmAccessTokens[accessToken], expiry > now
        else {
            return FCMEndpoint.FCMError.unauthenticated.response
        }
        guard inspection.projectID == configuredProject else {
            return FCMEndpoint.FCMError.permissionDenied(project: inspection.projectID).response
        }
        let deviceToken = inspection.deviceToken ?? ""
        switch self.scriptedFault(provider: .fcm, token: deviceToken) {
        case .serviceUnavailable?: return FCMEndpoint.FCMError.unavailable.response
        case .throttled?: return FCMEndpoint.FCMError.quotaExceeded.response
        case .internalError?: return FCMEndpoint.FCMError.internalFailure.response
        case .credentialExpired?: return FCMEndpoint.FCMError.unauthenticated.response
        case nil: break
        }
        if let rejection = inspection.rejection {
            return rejection.response
        }
        switch ScriptedToken(token: deviceToken) {
        case .dead?: return FCMEndpoint.FCMError.unregistered.response
        case .invalid?: return FCMEndpoint.FCMError.invalidRegistrationToken.response
        case .wrongSender?: return FCMEndpoint.FCMError.senderIDMismatch.response
        case .tooBig?: return FCMEndpoint.FCMError.tooBig.response
        case .badCredentials?: return FCMEndpoint.FCMError.thirdPartyAuthError.response
        default: break
        }
        if !inspection.validateOnly, let token = inspection.deviceToken, let payload = inspection.payload {
            self.lastPayloads.record(payload, for: token)
        }
        let messageID =
            inspection.validateOnly
            ? "fake_message_id" : "0:\(Int64(now.timeIntervalSince1970 * 1000))%\(randomHex(byteCount: 8))"
        let body: SimulatorJSON = ["name": .string("projects/\(configuredProject)/messages/\(messageID)")]
        return .json(200, body.text)
    }
}

/// A `google.protobuf.Duration` in JSON: seconds with up to nine fractional digits and an `s`; FCM allows 0 to 4 weeks.
private func isValidTTL(_ text: String) -> Bool {
    guard text.hasSuffix("s") else { return false }
    let number = text.dropLast()
    let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
    guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit),
        parts.count == 1 || (1...9).contains(parts[1].count) && parts[1].allSatisfy(\.isASCIIDigit),
        let seconds = Double(number)
    else {
        return false
    }
    return seconds <= maxTTLSeconds
}

extension Character {
    fileprivate var isASCIIDigit: Bool {
        ("0"..."9").contains(self)
    }
}

private let requestFields: Set<String> = ["message", "validate_only", "validateOnly"]
private let messageFields: Set<String> = [
    "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "fcmOptions", "token", "topic",
    "condition",
]

/// The type of an `AndroidNotification` member in protobuf's JSON mapping.
private enum FieldType: Sendable {
    case string
    case strings
    case bool
    case int32
    case object
    /// `#rrggbb`.
    case color
    /// One of the enum's value names (its numbers, which protobuf also reads, are refused: nothing sends them).
    case enumeration(String, Set<String>)

    func accepts(_ value: SimulatorJSON) -> Bool {
        switch self {
        case .string: value.stringValue != nil
        case .strings: value.arrayValue?.allSatisfy { $0.stringValue != nil } ?? false
        case .bool: value.boolValue != nil
        case .object: value.objectValue != nil
        case .int32:
            // protobuf's JSON mapping reads an int32 from a number or a string of one.
            if let number = value.numberValue ?? value.stringValue.flatMap({ Int64($0) }).map(Double.init) {
                number == number.rounded() && Double(Int32.min) <= number && number <= Double(Int32.max)
            } else {
                false
            }
        case .color:
            value.stringValue.map { text in
                text.utf8.count == 7 && text.hasPrefix("#") && text.utf8.dropFirst().allSatisfy(isHexDigit)
            } ?? false
        case .enumeration(_, let names): value.stringValue.map(names.contains) ?? false
        }
    }

    /// As FCM's messages name it.
    var name: String {
        switch self {
        case .string, .color: "TYPE_STRING"
        case .strings: "TYPE_STRING, repeated"
        case .bool: "TYPE_BOOL"
        case .int32: "TYPE_INT32"
        case .object: "TYPE_MESSAGE"
        case .enumeration(let name, _): "type.googleapis.com/google.firebase.fcm.v1.\(name)"
        }
    }
}

/// FCM's `AndroidNotification` members by their snake_case name.
private let androidNotificationTypes: [String: FieldType] = [
    "title": .string, "body": .string, "icon": .string, "color": .color, "sound": .string, "tag": .string,
    "click_action": .string, "body_loc_key": .string, "body_loc_args": .strings, "title_loc_key": .string,
    "title_loc_args": .strings, "channel_id": .string, "ticker": .string, "sticky": .bool, "event_time": .string,
    "local_only": .bool,
    "notification_priority": .enumeration(
        "AndroidNotification.NotificationPriority",
        [
            "PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH",
            "PRIORITY_MAX",
        ]),
    "default_sound": .bool, "default_vibrate_timings": .bool, "default_light_settings": .bool,
    "vibrate_timings": .strings,
    "visibility": .enumeration(
        "AndroidNotification.Visibility", ["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]),
    "notification_count": .int32, "light_settings": .object, "image": .string, "bypass_proxy_notification": .bool,
    "proxy": .enumeration("AndroidNotification.Proxy", ["PROXY_UNSPECIFIED", "ALLOW", "DENY", "IF_PRIORITY_LOWERED"]),
]

/// ``androidNotificationTypes`` under both of protobuf's JSON spellings (`click_action`, `clickAction`), each with
/// its snake_case name.
private let androidNotificationFields: [String: (name: String, type: FieldType)] = {
    var fields: [String: (name: String, type: FieldType)] = [:]
    for (name, type) in androidNotificationTypes {
        let words = name.split(separator: "_")
        let camel = String(words[0]) + words.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        fields[name] = (name, type)
        fields[camel] = (name, type)
    }
    return fields
}()

/// FCM: these data keys are reserved.
private let reservedDataKeys: Set<String> = ["from", "message_type"]
private let reservedDataKeyPrefixes = ["google.", "gcm.notification."]
/// FCM: messages up to 4096 bytes (notification plus data).
private let maxPayloadBytes = 4096
/// FCM: `android.ttl` at most 4 weeks.
private let maxTTLSeconds: Double = 2_419_200
