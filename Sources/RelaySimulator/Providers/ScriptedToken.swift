/// A behaviour a test scripts through the first four characters of a device token.
///
/// The token is the APNs path token, the FCM `message.token`, or the text inside the brackets of an Expo push token.
/// Anything that starts with none of these codes goes through the normal checks and succeeds.
///
/// | Code | APNs | FCM | Expo |
/// |---|---|---|---|
/// | `0410` | 410 `Unregistered` + `timestamp` | 404 `UNREGISTERED` | ticket `DeviceNotRegistered` |
/// | `0400` | 400 `BadDeviceToken` | 400 `INVALID_ARGUMENT` (not a valid token) | ticket `DeviceNotRegistered` |
/// | `0403` | 400 `DeviceTokenNotForTopic` | 403 `SENDER_ID_MISMATCH` | ticket `MismatchSenderId` |
/// | `0413` | 413 `PayloadTooLarge` | 400 `INVALID_ARGUMENT` (too big) | ticket `MessageTooBig` |
/// | `0503` | 503 ×2, then normal | 503 `UNAVAILABLE` ×2 | whole request 503 ×2 |
/// | `0429` | 429 once (`retry-after: 1`) | 429 `QUOTA_EXCEEDED` once | whole request 429 once |
/// | `0500` | always 500 | always 500 `INTERNAL` | always whole request 500 |
/// | `0401` | 403 `ExpiredProviderToken` once | 401 `UNAUTHENTICATED` once (no `FcmError`) | normal |
/// | `0555` | answered after `slowLatency` | same | same |
/// | `0610` | normal | normal | ticket ok, receipt `DeviceNotRegistered` |
/// | `0407` | 403 `InvalidProviderToken` | 401 `THIRD_PARTY_AUTH_ERROR` | ticket ok, receipt `InvalidCredentials` |
///
/// ### Implementation
/// The faults that happen "once" or "twice" count attempts per provider and exact token string in
/// ``ProviderSimulator/State``: an attempt is a request that got past authentication (an unauthenticated request never
/// reaches the script). Faults come before the request's own validation, outcomes (`0410`, `0400`, `0403`, `0413`)
/// after it, so a malformed request to a dead token is still answered as malformed.
package enum ScriptedToken: String, Sendable, Hashable, CaseIterable {
    case dead = "0410"
    case invalid = "0400"
    case wrongSender = "0403"
    case tooBig = "0413"
    case flaky = "0503"
    case throttledOnce = "0429"
    case broken = "0500"
    case credentialExpiredOnce = "0401"
    case slow = "0555"
    case receiptDead = "0610"
    /// The publisher's credentials are refused for this token's app (Expo reports it in the receipt).
    case badCredentials = "0407"

    /// The script `token` selects, or `nil` for an ordinary token.
    package init?(token: some StringProtocol) {
        guard token.utf8.count >= 4, let script = Self(rawValue: String(token.prefix(4))) else {
            return nil
        }
        self = script
    }

    /// Whether the script counts attempts (so the simulator keeps a counter for its tokens).
    var countsAttempts: Bool {
        self.fault(attempt: 1) != self.fault(attempt: Int.max)
    }

    /// The fault to answer with on the `attempt`-th attempt (from 1), before the request's own checks; `nil` to go on.
    func fault(attempt: Int) -> ScriptedFault? {
        switch self {
        case .flaky: attempt <= flakyFailures ? .serviceUnavailable : nil
        case .throttledOnce: attempt == 1 ? .throttled : nil
        case .broken: .internalError
        case .credentialExpiredOnce: attempt == 1 ? .credentialExpired : nil
        case .dead, .invalid, .wrongSender, .tooBig, .slow, .receiptDead, .badCredentials: nil
        }
    }
}

/// A scripted failure that happens before a request's own checks; each endpoint renders it in its provider's words.
enum ScriptedFault: Sendable, Hashable {
    /// APNs 503 `ServiceUnavailable`, FCM 503 `UNAVAILABLE`, Expo whole-request 503.
    case serviceUnavailable
    /// APNs 429 `TooManyRequests`, FCM 429 `QUOTA_EXCEEDED`, Expo whole-request 429; all with `retry-after: 1`.
    case throttled
    /// APNs 500 `InternalServerError`, FCM 500 `INTERNAL`, Expo whole-request 500.
    case internalError
    /// APNs 403 `ExpiredProviderToken`, FCM plain 401 `UNAUTHENTICATED`; Expo has no such fault.
    case credentialExpired
}

/// How many attempts a `0503` token fails before it succeeds.
private let flakyFailures = 2
/// The `retry-after` header value (seconds) of scripted throttling.
let scriptedRetryAfterSeconds = 1
