import Foundation
import RelayCore
import RelayStore

/// What `/admin/v1` answers: tenants, keys and usage as JSON, never a secret or a secret's hash.
///
/// The `before`/`after` of the admin audit records are the audit log's own snapshots (`Tenant.auditSnapshot`,
/// `TenantKeyRecord.auditSnapshot`), shared with the command-line tools; these are the API's shapes.
enum AdminJSON {
    /// A tenant as the API shows it: its fields under the names the `POST` and `PATCH` bodies use.
    static func tenant(_ tenant: Tenant) -> JSONValue {
        .object([
            "id": .string(tenant.id),
            "name": .string(tenant.name),
            "rate": .double(tenant.limits.ratePerSecond),
            "burst": .int(Int64(tenant.limits.burst)),
            "dailyQuota": .int(Int64(tenant.limits.dailyQuota)),
            "perDevicePerMinute": .int(Int64(tenant.limits.perDevicePerMinute)),
            "allowCriticalAlerts": .bool(tenant.allowCriticalAlerts),
            "allowedProviders": tenant.allowedProviders.map {
                JSONValue.array($0.map(\.rawValue).sorted().map(JSONValue.string))
            }
                ?? .null,
            "criticalChannel": tenant.criticalChannel.map(JSONValue.string) ?? .null,
            "note": tenant.note.map(JSONValue.string) ?? .null,
            "disabled": .bool(tenant.disabled),
            "createdAt": time(tenant.createdAt),
            "deletedAt": tenant.deletedAt.map(time) ?? .null,
        ])
    }

    /// A key as the API shows it: dates and state, never the secret or its hash.
    static func key(_ key: TenantKeyRecord, at now: Date) -> JSONValue {
        .object([
            "id": .string(key.id),
            "tenant": .string(key.tenantID),
            "createdAt": time(key.createdAt),
            "lastUsedAt": key.lastUsedAt.map(time) ?? .null,
            "expiresAt": key.expiresAt.map(time) ?? .null,
            "revokedAt": key.revokedAt.map(time) ?? .null,
            "active": .bool(key.isActive(at: now)),
        ])
    }

    /// A newly issued key: ``key(_:at:)`` plus the key itself, shown this once.
    static func issued(_ record: TenantKeyRecord, key: String, at now: Date) -> JSONValue {
        var fields = AdminJSON.key(record, at: now).objectValue ?? [:]
        fields["key"] = .string(key)
        return .object(fields)
    }

    /// `{"tenant", "days": [{"day", "providers": {"apns": {delivered, tokenInvalid, rejected, rateLimited, failed,
    /// accepted}}}]}` with days ascending; a day or provider without any notification is left out. `accepted`: Expo
    /// notifications whose receipt is not known yet.
    static func usage(tenantID: String, rows: [UsageRow]) -> JSONValue {
        var days: [String: [String: JSONValue]] = [:]
        for row in rows where !row.counts.isZero {
            days[row.day, default: [:]][row.provider.rawValue] = .object([
                "delivered": .int(Int64(row.counts.delivered)),
                "tokenInvalid": .int(Int64(row.counts.tokenInvalid)),
                "rejected": .int(Int64(row.counts.rejected)),
                "rateLimited": .int(Int64(row.counts.rateLimited)),
                "failed": .int(Int64(row.counts.failed)),
                "accepted": .int(Int64(row.counts.accepted)),
            ])
        }
        let ordered = days.keys.sorted().map { day in
            JSONValue.object(["day": .string(day), "providers": .object(days[day] ?? [:])])
        }
        return .object(["tenant": .string(tenantID), "days": .array(ordered)])
    }

    /// Times as ISO 8601 in UTC with milliseconds, as the audit log writes them.
    static func time(_ date: Date) -> JSONValue {
        .string(AuditTime.iso8601(millis: AuditTime.millis(date)))
    }
}
