internal import Foundation
internal import Synchronization

/// The APNs provider API, `POST /3/device/<token>` (PROTOCOLS.md §1).
///
/// A request is answered by the first rule it breaks, in this order:
/// 1. wrong method or path: 405 `MethodNotAllowed`, 404 `BadPath` (no other check);
/// 2. ``ProviderSimulator/Configuration/errorRate``: 503 `ServiceUnavailable`;
/// 3. the provider token: 403 `MissingProviderToken`, `InvalidProviderToken`, `ExpiredProviderToken` (`iat` older
///    than an hour; more than a minute in the future is `InvalidProviderToken`), then connection binding: the first
///    authenticated key on a connection binds it, another key later is 403 `UnrelatedKeyIdInToken`;
/// 4. scripted faults (``ScriptedToken``);
/// 5. the request, in order: `DuplicateHeaders` (an `apns-*` header twice), `MissingTopic`, `InvalidPushType`
///    (absent means `alert`, as at APNs), the topic (`DeviceTokenNotForTopic` when it starts with the bundle ID but has
///    the wrong suffix, else `TopicDisallowed`), `BadPriority` (not 1/5/10, or `background` with 10), `BadMessageId`,
///    `BadCollapseId` (over 64 bytes), `BadExpirationDate` (not a non-negative integer), `MissingDeviceToken`,
///    `BadDeviceToken` (not even-length hex, or over 200 characters), `PayloadEmpty` (empty body), 413
///    `PayloadTooLarge` (over 4096 bytes, 5120 for `voip`), and `PayloadEmpty` again for a body that is not a JSON
///    object with an `aps` object (APNs documents no reason for that; the relay classifies both as its own bug);
/// 6. scripted outcomes (`0410`, `0400`, `0403`, `0413`);
/// 7. success: 200, `apns-id` (the request's, or a new lowercase UUID) and `apns-unique-id`, empty body; the payload
///    becomes the device token's ``ProviderSimulator/lastPayload(for:)``.
///
/// A push that APNs accepts but a device would ignore is answered 200 as well, and recorded as ignored by the device
/// with the reason (``SimulatedRequest/ignoredByDevice``, ``ProviderSimulator/ignoredByDevice()``): a `liveactivity`
/// push whose `aps` lacks a number `timestamp`, an `event` of `start`, `update` or `end`, or, for start and update, a
/// `content-state` object (on end it is optional, but an object when present), or, for start, an `attributes-type`
/// string and an `attributes` object. Apple names no APNs reason for these: the device drops them (PROTOCOLS.md §1.8).
/// Whatever else is in `aps` is not checked: an `alert` push with `content-available` and nothing visible is fine. A
/// `liveactivity` push whose topic lacks `.push-type.liveactivity` breaks the topic rule of step 5.
///
/// Every error carries `apns-id` and `{"reason": …}`; 410 adds `"timestamp"` (now, in ms since the epoch, so a
/// token registered before the push counts as dead).
final class APNsEndpoint: Sendable {
    let configuration: ProviderSimulator.Configuration.APNs
    private let verifier: APNsProviderTokenVerifier
    /// Verified tokens by their text: a relay reuses one token for up to an hour, and an ECDSA verification per push
    /// would dominate a benchmark. Only the clock-independent verdict is cached.
    private let verified = Mutex<[String: APNsProviderTokenCheck]>([:])

    init(configuration: ProviderSimulator.Configuration.APNs) {
        self.configuration = configuration
        self.verifier = APNsProviderTokenVerifier(teamID: configuration.teamID, keys: configuration.keys)
    }

    /// What the decision needs from a request, worked out without the simulator's state.
    struct Inspection: Sendable {
        /// The path token (possibly empty).
        var deviceToken: String
        /// The `apns-id` to answer with.
        var apnsID: String
        var providerToken: APNsProviderTokenCheck
        /// The first problem with the headers, token or payload.
        var rejection: Rejection?
        /// Why a device would ignore the push if APNs accepts it (``APNsEndpoint/deviceProblem(pushType:payload:)``).
        var ignoredByDevice: String?
        /// The device token's last payload, should APNs accept the push.
        var payload: SimulatedPayload?
        /// An answer that needs neither credentials nor state (wrong method or path).
        var immediate: HTTP2TestResponse?
    }

    /// An error answer: status and `reason`.
    struct Rejection: Sendable, Hashable {
        var status: Int
        var reason: String
    }

    /// Inspects `request`, whose path has already been routed here; `deviceToken` is `nil` for a path under `/3/`
    /// that is not `/3/device/<token>`.
    func inspect(_ request: HTTP2TestRequest, deviceToken: Substring?) -> Inspection {
        let requestID = request.header("apns-id").flatMap { UUID(uuidString: $0) != nil ? $0 : nil }
        let apnsID = requestID ?? UUID().uuidString.lowercased()
        var inspection = Inspection(
            deviceToken: deviceToken.map(String.init) ?? "",
            apnsID: apnsID,
            providerToken: .missing
        )
        guard request.method == "POST" else {
            inspection.immediate = Self.error(405, "MethodNotAllowed", apnsID: apnsID)
            return inspection
        }
        guard deviceToken != nil else {
            inspection.immediate = Self.error(404, "BadPath", apnsID: apnsID)
            return inspection
        }
        inspection.providerToken = self.checkProviderToken(request.header("authorization"))
        let payload = SimulatorJSON(parsing: request.body)
        inspection.rejection = self.validate(request, deviceToken: inspection.deviceToken, payload: payload)
        if inspection.rejection == nil, let payload {
            let pushType = request.header("apns-push-type") ?? "alert"
            inspection.ignoredByDevice = Self.deviceProblem(pushType: pushType, payload: payload)
            var headers: [String: String] = [:]
            for name in ["apns-push-type", "apns-priority", "apns-topic"] {
                headers[name] = request.header(name)
            }
            inspection.payload = SimulatedPayload(
                provider: .apns, headers: headers, body: request.body, ignoredByDevice: inspection.ignoredByDevice)
        }
        return inspection
    }

    private func checkProviderToken(_ authorization: String?) -> APNsProviderTokenCheck {
        guard let authorization else {
            return .missing
        }
        if let cached = self.verified.withLock({ $0[authorization] }) {
            return cached
        }
        let check = self.verifier.check(authorization: authorization)
        self.verified.withLock { cache in
            if cache.count >= verifiedTokenCacheLimit {
                cache.removeAll(keepingCapacity: true)
            }
            cache[authorization] = check
        }
        return check
    }

    /// The request's own first problem, in the order documented on the type; `payload` is its body parsed as JSON.
    func validate(_ request: HTTP2TestRequest, deviceToken: String, payload: SimulatorJSON?) -> Rejection? {
        var seen: Set<String> = []
        for header in request.headers where header.name.hasPrefix("apns-") {
            guard seen.insert(header.name).inserted else {
                return Rejection(status: 400, reason: "DuplicateHeaders")
            }
        }
        guard let topic = request.header("apns-topic"), !topic.isEmpty else {
            return Rejection(status: 400, reason: "MissingTopic")
        }
        let pushType = request.header("apns-push-type") ?? "alert"
        guard let suffix = topicSuffixes[pushType] else {
            return Rejection(status: 400, reason: "InvalidPushType")
        }
        if topic != self.configuration.bundleID + suffix {
            let reason = topic.hasPrefix(self.configuration.bundleID) ? "DeviceTokenNotForTopic" : "TopicDisallowed"
            return Rejection(status: 400, reason: reason)
        }
        if let priority = request.header("apns-priority") {
            guard ["1", "5", "10"].contains(priority), !(pushType == "background" && priority == "10") else {
                return Rejection(status: 400, reason: "BadPriority")
            }
        }
        if let id = request.header("apns-id"), UUID(uuidString: id) == nil {
            return Rejection(status: 400, reason: "BadMessageId")
        }
        if let collapseID = request.header("apns-collapse-id"), collapseID.utf8.count > maxCollapseIDBytes {
            return Rejection(status: 400, reason: "BadCollapseId")
        }
        if let expiration = request.header("apns-expiration"), UInt64(expiration) == nil {
            return Rejection(status: 400, reason: "BadExpirationDate")
        }
        guard !deviceToken.isEmpty else {
            return Rejection(status: 400, reason: "MissingDeviceToken")
        }
        guard deviceToken.utf8.count % 2 == 0, deviceToken.utf8.count <= maxDeviceTokenCharacters,
            deviceToken.utf8.allSatisfy(isHexDigit)
        else {
            return Rejection(status: 400, reason: "BadDeviceToken")
        }
        guard !request.body.isEmpty else {
            return Rejection(status: 400, reason: "PayloadEmpty")
        }
        let limit = pushType == "voip" ? maxVoIPPayloadBytes : maxPayloadBytes
        guard request.body.count <= limit else {
            return Rejection(status: 413, reason: "PayloadTooLarge")
        }
        guard let payload, payload["aps"]?.objectValue != nil else {
            return Rejection(status: 400, reason: "PayloadEmpty")
        }
        return nil
    }

    /// Why a device would ignore a push that APNs accepts, or `nil`: the Live Activity rules documented on the type
    /// (PROTOCOLS.md §1.8), checked in this order: `timestamp`, `event`, `content-state`, `attributes-type`,
    /// `attributes`.
    ///
    /// - Parameters:
    ///   - pushType: `apns-push-type` (`alert` when absent).
    ///   - payload: The body, a JSON object with an `aps` object.
    /// - Returns: A short reason such as `"liveactivity without timestamp"`.
    static func deviceProblem(pushType: String, payload: SimulatorJSON) -> String? {
        guard pushType == "liveactivity", let aps = payload["aps"] else {
            return nil
        }
        if let problem = missing(aps, "timestamp", in: "liveactivity", expected: .number) {
            return problem
        }
        if let problem = missing(aps, "event", in: "liveactivity", expected: .string) {
            return problem
        }
        guard let event = aps["event"]?.stringValue, liveActivityEvents.contains(event) else {
            return "liveactivity with event \(aps["event"]?.text ?? ""), not start, update or end"
        }
        let push = "liveactivity \(event)"
        if event != "end" || aps["content-state"] != nil {
            if let problem = missing(aps, "content-state", in: push, expected: .object) {
                return problem
            }
        }
        if event == "start" {
            if let problem = missing(aps, "attributes-type", in: push, expected: .string) {
                return problem
            }
            if let problem = missing(aps, "attributes", in: push, expected: .object) {
                return problem
            }
        }
        return nil
    }

    /// The JSON type a Live Activity key must have.
    private enum Expected {
        case number, string, object

        func matches(_ value: SimulatorJSON) -> Bool {
            switch self {
            case .number: value.numberValue != nil
            case .string: value.stringValue != nil
            case .object: value.objectValue != nil
            }
        }

        var name: String {
            switch self {
            case .number: "a number"
            case .string: "a string"
            case .object: "an object"
            }
        }
    }

    /// `"<push> without <key>"`, `"<push> with <key> not <type>"`, or `nil` when `aps[key]` is of the type.
    private static func missing(_ aps: SimulatorJSON, _ key: String, in push: String, expected: Expected) -> String? {
        guard let value = aps[key] else {
            return "\(push) without \(key)"
        }
        return expected.matches(value) ? nil : "\(push) with \(key) not \(expected.name)"
    }

    // MARK: - Answers

    static func error(_ status: Int, _ reason: String, apnsID: String, timestamp: Date? = nil) -> HTTP2TestResponse {
        var body: SimulatorJSON = ["reason": .string(reason)]
        if let timestamp {
            body = [
                "reason": .string(reason), "timestamp": .number((timestamp.timeIntervalSince1970 * 1000).rounded()),
            ]
        }
        var headers = [(name: "apns-id", value: apnsID)]
        if status == 429 {
            headers.append((name: "retry-after", value: String(scriptedRetryAfterSeconds)))
        }
        return .json(status, body.text, headers: headers)
    }

    static func success(apnsID: String) -> HTTP2TestResponse {
        HTTP2TestResponse(
            status: 200,
            headers: [
                (name: "apns-id", value: apnsID), (name: "apns-unique-id", value: UUID().uuidString.lowercased()),
            ]
        )
    }
}

extension ProviderSimulator.State {
    /// Decides the answer to an inspected APNs request (see ``APNsEndpoint`` for the order of the rules).
    ///
    /// - Parameters:
    ///   - inspection: What ``APNsEndpoint/inspect(_:deviceToken:)`` found.
    ///   - connectionID: The connection that carried it, for key binding.
    ///   - transientError: Whether ``ProviderSimulator/Configuration/errorRate`` picked this request.
    ///   - now: The current time, for `iat` and the 410 `timestamp`.
    mutating func apnsRequestArrived(
        _ inspection: APNsEndpoint.Inspection,
        connectionID: Int,
        transientError: Bool,
        now: Date
    ) -> HTTP2TestResponse {
        let apnsID = inspection.apnsID
        if let immediate = inspection.immediate {
            return immediate
        }
        if transientError {
            return APNsEndpoint.error(503, "ServiceUnavailable", apnsID: apnsID)
        }
        switch inspection.providerToken {
        case .missing:
            return APNsEndpoint.error(403, "MissingProviderToken", apnsID: apnsID)
        case .invalid:
            return APNsEndpoint.error(403, "InvalidProviderToken", apnsID: apnsID)
        case .valid(let keyID, let issuedAt):
            let age = now.timeIntervalSince1970 - issuedAt
            if age > providerTokenLifetime {
                return APNsEndpoint.error(403, "ExpiredProviderToken", apnsID: apnsID)
            }
            if -age > allowedClockSkew {
                return APNsEndpoint.error(403, "InvalidProviderToken", apnsID: apnsID)
            }
            if let bound = self.apnsBindings[connectionID], bound != keyID {
                return APNsEndpoint.error(403, "UnrelatedKeyIdInToken", apnsID: apnsID)
            }
            self.apnsBindings[connectionID] = keyID
        }
        switch self.scriptedFault(provider: .apns, token: inspection.deviceToken) {
        case .serviceUnavailable?: return APNsEndpoint.error(503, "ServiceUnavailable", apnsID: apnsID)
        case .throttled?: return APNsEndpoint.error(429, "TooManyRequests", apnsID: apnsID)
        case .internalError?: return APNsEndpoint.error(500, "InternalServerError", apnsID: apnsID)
        case .credentialExpired?: return APNsEndpoint.error(403, "ExpiredProviderToken", apnsID: apnsID)
        case nil: break
        }
        if let rejection = inspection.rejection {
            return APNsEndpoint.error(rejection.status, rejection.reason, apnsID: apnsID)
        }
        switch ScriptedToken(token: inspection.deviceToken) {
        case .dead?: return APNsEndpoint.error(410, "Unregistered", apnsID: apnsID, timestamp: now)
        case .invalid?: return APNsEndpoint.error(400, "BadDeviceToken", apnsID: apnsID)
        case .wrongSender?: return APNsEndpoint.error(400, "DeviceTokenNotForTopic", apnsID: apnsID)
        case .tooBig?: return APNsEndpoint.error(413, "PayloadTooLarge", apnsID: apnsID)
        case .badCredentials?: return APNsEndpoint.error(403, "InvalidProviderToken", apnsID: apnsID)
        default:
            if let payload = inspection.payload {
                // Apple: tokens are hex, compared case-insensitively.
                self.lastPayloads.record(payload, for: inspection.deviceToken.lowercased())
            }
            return APNsEndpoint.success(apnsID: apnsID)
        }
    }
}

/// Apple: a Live Activity push's `event` (PROTOCOLS.md §1.8).
private let liveActivityEvents: Set<String> = ["start", "update", "end"]

/// `apns-topic` is the bundle ID plus this suffix for each `apns-push-type` (PROTOCOLS.md §1.3).
private let topicSuffixes: [String: String] = [
    "alert": "",
    "background": "",
    "voip": ".voip",
    "location": ".location-query",
    "complication": ".complication",
    "fileprovider": ".pushkit.fileprovider",
    "liveactivity": ".push-type.liveactivity",
    "pushtotalk": ".voip-ptt",
    "widgets": ".push-type.widgets",
    "controls": ".push-type.controls",
]

/// Apple: payloads up to 4096 bytes, 5120 for VoIP.
private let maxPayloadBytes = 4096
private let maxVoIPPayloadBytes = 5120
/// Apple: `apns-collapse-id` at most 64 bytes.
private let maxCollapseIDBytes = 64
/// Apple says token lengths vary; this bound is generous (tokens are 64 characters today).
private let maxDeviceTokenCharacters = 200
/// Apple: a provider token older than one hour is `ExpiredProviderToken`.
private let providerTokenLifetime: TimeInterval = 60 * 60
/// How far in the future an `iat` may be before the token is refused.
private let allowedClockSkew: TimeInterval = 60
/// Bounds the verified-token cache; a relay uses a handful of tokens at a time.
private let verifiedTokenCacheLimit = 1024

func isHexDigit(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
        UInt8(ascii: "A")...UInt8(ascii: "F"):
        true
    default:
        false
    }
}
