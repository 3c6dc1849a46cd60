package import Foundation
import RelayCore
package import RelayStore

/// A tenant's usage by day and provider: what ``TenantAdministration/usage(of:days:)`` reads, shown as a table by
/// `pushrelay usage` and as JSON by ``AdminJSON/usage(_:)``.
package struct UsageReport: Sendable {
    package var tenant: Tenant
    /// The first day included, `YYYY-MM-DD` (UTC).
    package var fromDay: String
    package var rows: [UsageRow]

    package init(tenant: Tenant, fromDay: String, rows: [UsageRow]) {
        self.tenant = tenant
        self.fromDay = fromDay
        self.rows = rows.sorted { ($0.day, $0.provider.rawValue) < ($1.day, $1.provider.rawValue) }
    }

    /// The first UTC day of a report covering the last `days` days, today included.
    package static func fromDay(days: Int, now: Date) -> String {
        UsageKey.day(of: now.addingTimeInterval(-Double(max(days, 1) - 1) * TenantRules.secondsPerDay))
    }

    package var total: UsageCounts {
        rows.reduce(UsageCounts()) { $0 + $1.counts }
    }

    /// `ACCEPTED` (Expo notifications whose receipt is not known yet) comes last before `TOTAL`, so the columns that
    /// were there before it keep their places.
    private static let columns = [
        "DAY", "PROVIDER", "DELIVERED", "TOKEN_INVALID", "REJECTED", "RATE_LIMITED", "FAILED", "ACCEPTED", "TOTAL",
    ]

    /// A header, one line per day and provider, and a total line, in aligned columns like the other CLI tables.
    package var tableLines: [String] {
        var rows = self.rows.map { Self.cells($0.day, $0.provider.rawValue, $0.counts) }
        rows.append(Self.cells("total", "", total))
        return TextTable.lines(Self.columns, rows)
    }

    private static func cells(_ day: String, _ provider: String, _ counts: UsageCounts) -> [String] {
        [day, provider]
            + [
                counts.delivered, counts.tokenInvalid, counts.rejected, counts.rateLimited, counts.failed,
                counts.accepted, counts.total,
            ].map(String.init)
    }
}
