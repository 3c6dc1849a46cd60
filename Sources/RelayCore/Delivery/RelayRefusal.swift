/// The relay's own refusals of one notification, before anything is sent upstream.
/// Its code, as tickets, receipts and the audit log spell it, is ``code`` (spelt by ``OutcomeCode``).
package enum RelayRefusal: Sendable, CaseIterable {
    case criticalAlertsNotAllowed
    case providerNotConfigured
    case messageRateExceeded
    /// The operator allows this tenant other providers only; the code is ProviderNotConfigured, as for the
    /// relay as a whole, so callers need to handle one code.
    case providerNotAllowed
    /// The message names an app the operator does not allow this tenant.
    case appNotAllowed
    /// The relay began shutting down after admitting the notification and before sending it.
    case shuttingDown
    /// The tenant's rate or daily quota had no room for this notification, in a request whose critical alerts were
    /// sent: rather than the whole request refused (429), the others are refused one by one.
    case tenantRateLimited
    /// A critical alert beyond the tenant's rate, quota or per-device limit, with the tenant's critical reserve for
    /// this hour spent.
    case criticalReserveExhausted

    /// The ticket's error code.
    package var code: OutcomeCode {
        switch self {
        case .criticalAlertsNotAllowed: .criticalAlertsNotAllowed
        case .providerNotConfigured, .providerNotAllowed: .providerNotConfigured
        case .messageRateExceeded: .messageRateExceeded
        case .appNotAllowed: .appNotAllowed
        case .shuttingDown: .providerUnavailable
        case .tenantRateLimited: .tenantRateLimited
        case .criticalReserveExhausted: .criticalReserveExhausted
        }
    }

    package var message: String {
        switch self {
        case .providerNotAllowed:
            "This tenant may not push through this provider; nothing was sent. Ask the relay's operator."
        case .criticalAlertsNotAllowed:
            "This tenant may not send critical alerts; nothing was sent. Ask the relay's operator to allow them."
        case .providerNotConfigured: "The relay has no credentials for this provider; nothing was sent."
        case .appNotAllowed:
            "This tenant may not send for this app; nothing was sent. Ask the relay's operator to allow it."
        case .messageRateExceeded: "Too many notifications to this device token in the last minute; nothing was sent."
        case .shuttingDown: "The relay was shutting down; nothing was sent. Try again."
        case .tenantRateLimited:
            "The tenant's rate or daily quota has no room for this notification; nothing was sent. Try again later."
        case .criticalReserveExhausted:
            "The tenant's critical alerts beyond its limits are used up for this hour; nothing was sent. Ask the "
                + "relay's operator to raise the critical reserve."
        }
    }
}
