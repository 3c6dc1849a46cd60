package import Foundation
import RelayCore
package import RelayStore

/// A tenant's usage by day, provider and app: what ``TenantAdministration/usage(of:days:)`` reads, shown as a table by
/// `pushrelay usage` and as JSON by ``AdminJSON/usage(_:)``.
package struct UsageReport: Sendable {
    package var tenant: Tenant
    /// The first day included, `YYYY-MM-DD` (UTC).
    package var fromDay: String
    package var rows: [UsageRow]

    package init(tenant: Tenant, fromDay: String, rows: [UsageRow]) {
        self.tenant = tenant
        self.fromDay = fromDay
        self.rows = rows.sorted(by: UsageRow.reportOrder)
    }

    /// The first UTC day of a report covering the last `days` days, today included.
    package static func fromDay(days: Int, now: Date) -> String {
        UsageKey.day(of: now.addingTimeInterval(-Double(max(days, 1) - 1) * TenantRules.secondsPerDay))
    }

    package var total: UsageCounts {
        rows.reduce(UsageCounts()) { $0 + $1.counts }
    }

    /// `ACCEPTED` (Expo notifications whose receipt is not known yet) comes last before `TOTAL`, so the columns that
    /// were there before it keep their places. `CRITICAL` follows `TOTAL`: the critical notifications among those
    /// counted, whatever their column, so not part of it.
    private static let columns = [
        "DAY", "PROVIDER", "DELIVERED", "TOKEN_INVALID", "REJECTED", "RATE_LIMITED", "FAILED", "ACCEPTED", "TOTAL",
        "CRITICAL",
    ]

    /// A header, one line per day, provider and app, and a total line, in aligned columns like the other CLI tables.
    /// An app other than `default` follows its provider (`apns (beta)`), so the columns stay where they were.
    package var tableLines: [String] {
        var rows = self.rows.map { row in
            let provider = row.provider.rawValue + (row.app == AppName.default ? "" : " (\(row.app))")
            return Self.cells(row.day, provider, row.counts)
        }
        rows.append(Self.cells("total", "", total))
        return TextTable.lines(Self.columns, rows)
    }

    private static func cells(_ day: String, _ provider: String, _ counts: UsageCounts) -> [String] {
        [day, provider]
            + [
                counts.delivered, counts.tokenInvalid, counts.rejected, counts.rateLimited, counts.failed,
                counts.accepted, counts.total, counts.critical,
            ].map(String.init)
    }
}
