package import Foundation
package import RelayCore

/// Notifications of one tenant, day and provider, by how they ended.
package struct UsageCounts: Sendable, Equatable, Codable {
    package var delivered = 0
    /// DeviceNotRegistered or InvalidToken: the caller should drop the token.
    package var tokenInvalid = 0
    /// Refused by the relay's policy or the provider for the message itself (MessageTooBig, InvalidArgument,
    /// CriticalAlertsNotAllowed, ProviderNotConfigured, ProviderConfigurationError).
    package var rejected = 0
    /// Refused by the tenant's rate limits (whole requests answered 429, also counted in ``notAdmitted``, and
    /// MessageRateExceeded).
    package var rateLimited = 0
    /// Not delivered for the relay's or the provider's trouble: ProviderUnavailable.
    package var failed = 0
    /// Accepted by Expo (its ticket is ok) with the receipt not known yet. The receipt moves the notification to its
    /// final column (``acceptedEnded(_:)``), so this counts the Expo notifications still in flight.
    package var accepted = 0
    /// Of ``rateLimited``, the notifications of requests refused whole (429): the daily quota never admitted them,
    /// so they are the only ones it does not count (``quotaUsed``). Not a column of its own: ``total`` has them once,
    /// in ``rateLimited``.
    package var notAdmitted = 0
    /// The critical notifications among all the others, whatever their column (delivered or not): how much of the
    /// day's traffic were pages. A subset, so not part of ``total``; counted once per notification, when it is first
    /// counted (an Expo receipt that moves it from `accepted` leaves this as it is).
    package var critical = 0

    package init(
        delivered: Int = 0,
        tokenInvalid: Int = 0,
        rejected: Int = 0,
        rateLimited: Int = 0,
        failed: Int = 0,
        accepted: Int = 0,
        notAdmitted: Int = 0,
        critical: Int = 0
    ) {
        self.delivered = delivered
        self.tokenInvalid = tokenInvalid
        self.rejected = rejected
        self.rateLimited = rateLimited
        self.failed = failed
        self.accepted = accepted
        self.notAdmitted = notAdmitted
        self.critical = critical
    }

    /// Every notification, each in one column: an accepted one moves out of `accepted` when it lands in its final one.
    package var total: Int { delivered + tokenInvalid + rejected + rateLimited + failed + accepted }
    /// What the tenant's daily quota counted: every notification it admitted, whatever its outcome (refused by the
    /// relay's policy or the device's limit, delivered or not). All but those of requests refused whole.
    package var quotaUsed: Int { total - notAdmitted }
    /// Whether every column is 0. Not `total == 0`: a move from one column to another (a late Expo receipt) has a
    /// total of 0 and must still be written.
    package var isZero: Bool {
        delivered == 0 && tokenInvalid == 0 && rejected == 0 && rateLimited == 0 && failed == 0 && accepted == 0
            && notAdmitted == 0 && critical == 0
    }

    package static func + (lhs: UsageCounts, rhs: UsageCounts) -> UsageCounts {
        UsageCounts(
            delivered: lhs.delivered + rhs.delivered,
            tokenInvalid: lhs.tokenInvalid + rhs.tokenInvalid,
            rejected: lhs.rejected + rhs.rejected,
            rateLimited: lhs.rateLimited + rhs.rateLimited,
            failed: lhs.failed + rhs.failed,
            accepted: lhs.accepted + rhs.accepted,
            notAdmitted: lhs.notAdmitted + rhs.notAdmitted,
            critical: lhs.critical + rhs.critical
        )
    }

    /// What an Expo receipt does to the counters: one notification leaves `accepted` for the column of `outcome`.
    package static func acceptedEnded(_ outcome: DeliveryOutcome) -> UsageCounts {
        UsageCounts(outcome) + UsageCounts(accepted: -1)
    }

    /// One notification that ended with `outcome`.
    package init(_ outcome: DeliveryOutcome) {
        self.init(column: outcome.code?.usageColumn ?? .delivered)
        // Refused by the tenant's limits one by one: the day's quota never admitted them either.
        if outcome.code == .tenantRateLimited || outcome.code == .criticalReserveExhausted { notAdmitted = 1 }
    }

    /// One notification in `column`.
    package init(column: UsageColumn) {
        self.init()
        switch column {
        case .delivered: delivered = 1
        case .tokenInvalid: tokenInvalid = 1
        case .rejected: rejected = 1
        case .rateLimited: rateLimited = 1
        case .failed: failed = 1
        case .accepted: accepted = 1
        }
    }
}

/// Where a ``UsageCounts`` belongs: a tenant, a UTC day, a provider and an app.
package struct UsageKey: Sendable, Hashable {
    package var tenantID: String
    /// `YYYY-MM-DD`, UTC.
    package var day: String
    package var provider: Provider
    /// The app whose credentials sent (or would have sent) the notifications: `default` or an `[apps.<name>]`.
    package var app: String

    package init(tenantID: String, day: String, provider: Provider, app: String = AppName.default) {
        self.tenantID = tenantID
        self.day = day
        self.provider = provider
        self.app = app
    }

    package init(tenantID: String, date: Date, provider: Provider, app: String = AppName.default) {
        self.init(tenantID: tenantID, day: UsageKey.day(of: date), provider: provider, app: app)
    }

    /// The UTC day of `date` as `YYYY-MM-DD`.
    package static func day(of date: Date) -> String {
        AuditTime.day(millis: AuditTime.millis(date))
    }
}

/// One row of a tenant's usage report.
package struct UsageRow: Sendable, Equatable {
    package var day: String
    package var provider: Provider
    package var counts: UsageCounts
    /// The app of these notifications (``UsageKey/app``).
    package var app: String

    package init(day: String, provider: Provider, counts: UsageCounts, app: String = AppName.default) {
        self.day = day
        self.provider = provider
        self.counts = counts
        self.app = app
    }

    /// Report order: by day, provider, then app (`default` first).
    package static func reportOrder(_ lhs: UsageRow, _ rhs: UsageRow) -> Bool {
        let (left, right) = (lhs.app == AppName.default ? "" : lhs.app, rhs.app == AppName.default ? "" : rhs.app)
        return (lhs.day, lhs.provider.rawValue, left) < (rhs.day, rhs.provider.rawValue, right)
    }
}
