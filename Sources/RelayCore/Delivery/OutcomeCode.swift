/// The code a ticket or receipt ends with when a notification was not delivered: the relay's own vocabulary, which
/// the native API shows as it is and the Expo-compatible and OneUptime APIs translate (``expoCode(message:)``).
///
/// Every rendering of an outcome derives from this one type: the usage column it counts in (``usageColumn``),
/// whether the caller should drop the token (``removesToken``), the Expo code, and the OneUptime status (in
/// RelayServer). A code read from the store that this build does not know (written by a newer relay) is kept as
/// ``unrecognized(_:)`` rather than refused, and counts as rejected.
package enum OutcomeCode: Sendable, Hashable {
    /// The app was uninstalled or the token expired.
    case deviceNotRegistered
    /// The token is not a token of this provider or app.
    case invalidToken
    case messageTooBig
    /// The provider refused the message itself.
    case invalidArgument
    /// Too many messages to one device: the provider's limit or the tenant's per-device allowance.
    case messageRateExceeded
    /// The operator's credentials or set-up were refused; never the token's fault.
    case providerConfigurationError
    /// Transient failures outlasted the retry budget, or the relay could not send (shutdown).
    case providerUnavailable
    /// The tenant may not send critical alerts.
    case criticalAlertsNotAllowed
    /// The relay has no credentials for the provider, or the tenant may not use it.
    case providerNotConfigured
    /// The tenant may not send for the app the message names.
    case appNotAllowed
    /// The tenant's rate or quota refused this notification of a request whose critical alerts went out.
    case tenantRateLimited
    /// A critical alert beyond the tenant's limits, with its critical reserve for the hour spent.
    case criticalReserveExhausted
    case unrecognized(String)

    /// Every code this build writes.
    package static let known: [OutcomeCode] = [
        .deviceNotRegistered, .invalidToken, .messageTooBig, .invalidArgument, .messageRateExceeded,
        .providerConfigurationError, .providerUnavailable, .criticalAlertsNotAllowed, .providerNotConfigured,
        .appNotAllowed, .tenantRateLimited, .criticalReserveExhausted,
    ]

    /// Reads a code as tickets, receipts and the store spell it.
    package init(_ text: String) {
        self = Self.known.first { $0.rawValue == text } ?? .unrecognized(text)
    }

    /// The code as tickets, receipts, the audit log and the store spell it.
    package var rawValue: String {
        switch self {
        case .deviceNotRegistered: "DeviceNotRegistered"
        case .invalidToken: "InvalidToken"
        case .messageTooBig: "MessageTooBig"
        case .invalidArgument: "InvalidArgument"
        case .messageRateExceeded: "MessageRateExceeded"
        case .providerConfigurationError: "ProviderConfigurationError"
        case .providerUnavailable: "ProviderUnavailable"
        case .criticalAlertsNotAllowed: "CriticalAlertsNotAllowed"
        case .providerNotConfigured: "ProviderNotConfigured"
        case .appNotAllowed: "AppNotAllowed"
        case .tenantRateLimited: "TenantRateLimited"
        case .criticalReserveExhausted: "CriticalReserveExhausted"
        case .unrecognized(let text): text
        }
    }

    /// Whether the caller should stop using the token.
    package var removesToken: Bool { self == .deviceNotRegistered || self == .invalidToken }

    /// The usage column a notification that ended with this code counts in.
    package var usageColumn: UsageColumn {
        switch self {
        case .deviceNotRegistered, .invalidToken: .tokenInvalid
        case .messageRateExceeded, .tenantRateLimited, .criticalReserveExhausted: .rateLimited
        case .providerUnavailable: .failed
        case .messageTooBig, .invalidArgument, .providerConfigurationError, .criticalAlertsNotAllowed,
            .providerNotConfigured, .appNotAllowed, .unrecognized:
            .rejected
        }
    }
}

extension OutcomeCode: CustomStringConvertible {
    package var description: String { rawValue }
}

/// The columns of a tenant's usage: how its notifications ended.
package enum UsageColumn: String, Sendable, CaseIterable {
    case delivered
    /// DeviceNotRegistered or InvalidToken: the caller should drop the token.
    case tokenInvalid
    /// Refused for the message itself, by the relay's policy or by the provider.
    case rejected
    /// Refused by the tenant's rate limits (whole requests answered 429), MessageRateExceeded, TenantRateLimited
    /// and CriticalReserveExhausted.
    case rateLimited
    /// Not delivered for the relay's or the provider's trouble: ProviderUnavailable.
    case failed
    /// Accepted by Expo, with its receipt not known yet.
    case accepted
}
