package import Foundation
package import RelayCore
package import RelayStore

/// Tenants, keys and usage as JSON, never a secret or a secret's hash: what `/admin/v1` answers, and what the
/// command line prints with `--json`, the same objects for both.
///
/// The `before`/`after` of the admin audit records are the audit log's own snapshots (`Tenant.auditSnapshot`,
/// `TenantKeyRecord.auditSnapshot`); these are the shapes callers read.
package enum AdminJSON {
    /// A list: `{"data": [item…]}`.
    package static func list(_ items: [JSONValue]) -> JSONValue {
        .object(["data": .array(items)])
    }

    /// A tenant as the API shows it: its fields under the names the `POST` and `PATCH` bodies use.
    package static func tenant(_ tenant: Tenant) -> JSONValue {
        .object([
            "id": .string(tenant.id),
            "name": .string(tenant.name),
            "rate": .double(tenant.limits.ratePerSecond),
            "burst": .int(Int64(tenant.limits.burst)),
            "dailyQuota": .int(Int64(tenant.limits.dailyQuota)),
            "perDevicePerMinute": .int(Int64(tenant.limits.perDevicePerMinute)),
            "criticalReservePerHour": .int(Int64(tenant.limits.criticalReservePerHour)),
            "allowCriticalAlerts": .bool(tenant.allowCriticalAlerts),
            "allowedProviders": tenant.allowedProviders.map {
                JSONValue.array($0.map(\.rawValue).sorted().map(JSONValue.string))
            }
                ?? .null,
            "criticalChannel": tenant.criticalChannel.map(JSONValue.string) ?? .null,
            "apps": .array(tenant.apps.map(JSONValue.string)),
            "defaultApp": .string(tenant.defaultApp),
            "note": tenant.note.map(JSONValue.string) ?? .null,
            "disabled": .bool(tenant.disabled),
            "createdAt": time(tenant.createdAt),
            "deletedAt": tenant.deletedAt.map(time) ?? .null,
        ])
    }

    /// A tenant with its keys, as `pushrelay tenant show` prints it: ``tenant(_:)`` plus `keys`, each as
    /// ``key(_:at:)``.
    package static func tenant(_ tenant: Tenant, keys: [TenantKeyRecord], at now: Date) -> JSONValue {
        var fields = self.tenant(tenant).objectValue ?? [:]
        fields["keys"] = .array(keys.map { key($0, at: now) })
        return .object(fields)
    }

    /// A key as the API shows it: dates and state, never the secret or its hash.
    package static func key(_ key: TenantKeyRecord, at now: Date) -> JSONValue {
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

    /// A key and the tenant it belongs to (`GET /admin/v1/keys/{keyID}`).
    package static func key(_ key: TenantKeyRecord, of tenant: Tenant, at now: Date) -> JSONValue {
        var fields = self.key(key, at: now).objectValue ?? [:]
        fields["tenantName"] = .string(tenant.name)
        return .object(fields)
    }

    /// An operator: id, name, role and dates, never the token or its hash.
    package static func operatorRecord(_ record: OperatorRecord) -> JSONValue {
        .object([
            "id": .string(record.id), "name": .string(record.name), "role": .string(record.role.rawValue),
            "createdAt": time(record.createdAt), "revokedAt": record.revokedAt.map(time) ?? .null,
            "active": .bool(record.isActive),
        ])
    }

    /// A new operator: ``operatorRecord(_:)`` plus its token, shown this once.
    package static func createdOperator(_ created: TenantAdministration.CreatedOperator) -> JSONValue {
        var fields = operatorRecord(created.record).objectValue ?? [:]
        fields["token"] = .string(created.token)
        return .object(fields)
    }

    /// A newly issued key: ``key(_:at:)`` plus the key itself, shown this once.
    package static func issued(_ issued: TenantAdministration.IssuedKey, at now: Date) -> JSONValue {
        var fields = key(issued.record, at: now).objectValue ?? [:]
        fields["key"] = .string(issued.key)
        return .object(fields)
    }

    /// A rotation: ``issued(_:at:)`` for the new key, plus `replaces`, the old key as changed.
    package static func rotated(_ rotated: TenantAdministration.RotatedKey, at now: Date) -> JSONValue {
        var fields = issued(rotated.issued, at: now).objectValue ?? [:]
        fields["replaces"] = key(rotated.old, at: now)
        return .object(fields)
    }

    /// `{"tenant", "days": [{"day", "providers": {"apns": {delivered, tokenInvalid, rejected, rateLimited, failed,
    /// accepted, critical}}, "apps": {"beta": {"apns":
    /// {…}}}}]}` with days ascending: `providers` over every app, `apps` by app; a day, app or provider without any
    /// notification is left out. `accepted`: Expo notifications whose receipt is not known yet; `critical`: the
    /// critical notifications among all the others (a part of them, not another column).
    package static func usage(_ report: UsageReport) -> JSONValue {
        var days: [String: [Provider: UsageCounts]] = [:]
        var apps: [String: [String: [String: JSONValue]]] = [:]
        for row in report.rows where !row.counts.isZero {
            days[row.day, default: [:]][row.provider, default: UsageCounts()] =
                days[row.day, default: [:]][row.provider, default: UsageCounts()] + row.counts
            apps[row.day, default: [:]][row.app, default: [:]][row.provider.rawValue] = usageCounts(row.counts)
        }
        let ordered = days.keys.sorted().map { day in
            JSONValue.object([
                "day": .string(day),
                "providers": .object(
                    Dictionary(
                        uniqueKeysWithValues: (days[day] ?? [:]).map { ($0.key.rawValue, usageCounts($0.value)) })
                ),
                "apps": .object((apps[day] ?? [:]).mapValues(JSONValue.object)),
            ])
        }
        return .object(["tenant": .string(report.tenant.id), "days": .array(ordered)])
    }

    /// One provider's counts in a usage report.
    private static func usageCounts(_ counts: UsageCounts) -> JSONValue {
        .object([
            "delivered": .int(Int64(counts.delivered)),
            "tokenInvalid": .int(Int64(counts.tokenInvalid)),
            "rejected": .int(Int64(counts.rejected)),
            "rateLimited": .int(Int64(counts.rateLimited)),
            "failed": .int(Int64(counts.failed)),
            "accepted": .int(Int64(counts.accepted)),
            "critical": .int(Int64(counts.critical)),
        ])
    }

    /// Times as ISO 8601 in UTC with milliseconds, as the audit log writes them.
    package static func time(_ date: Date) -> JSONValue {
        .string(AuditTime.iso8601(millis: AuditTime.millis(date)))
    }
}
