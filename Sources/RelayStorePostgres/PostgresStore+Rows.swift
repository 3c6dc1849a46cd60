import Foundation
import PostgresNIO
import RelayCore
import RelayStore

/// Row decoding for ``PostgresStore``: the column names of `PostgresStore+Migrations.swift`.
extension PostgresRandomAccessRow {
    /// The value of `column`, which the query selected.
    func value<Value: PostgresDecodable>(_ column: String, as _: Value.Type = Value.self) throws -> Value {
        try self[column].decode(Value.self)
    }

    /// A date stored as UNIX seconds.
    func date(_ column: String) throws -> Date {
        Date(timeIntervalSince1970: try value(column, as: Double.self))
    }

    func dateIfPresent(_ column: String) throws -> Date? {
        try value(column, as: Double?.self).map(Date.init(timeIntervalSince1970:))
    }
}

extension Date {
    /// How ``PostgresStore`` stores dates: seconds since 1970 as `double precision`, exactly the `Double`.
    var unixSeconds: Double { timeIntervalSince1970 }
}

extension Tenant {
    init(row: PostgresRow) throws {
        let row = row.makeRandomAccess()
        self.init(
            id: try row.value("id"),
            name: try row.value("name"),
            limits: RateLimits(
                ratePerSecond: try row.value("rate_per_second"),
                burst: try row.value("burst"),
                dailyQuota: try row.value("daily_quota"),
                perDevicePerMinute: try row.value("per_device_per_minute"),
                criticalReservePerHour: try row.value("critical_reserve_per_hour")
            ),
            allowCriticalAlerts: try row.value("allow_critical_alerts"),
            disabled: try row.value("disabled"),
            createdAt: try row.date("created_at"),
            allowedProviders: try Tenant.providers(fromColumn: row.value("allowed_providers")),
            criticalChannel: try row.value("critical_channel"),
            apps: Tenant.apps(fromColumn: try row.value("apps")),
            defaultApp: try row.value("default_app"),
            note: try row.value("note"),
            deletedAt: try row.dateIfPresent("deleted_at")
        )
    }
}

extension TenantKeyRecord {
    init(row: PostgresRow) throws {
        let row = row.makeRandomAccess()
        self.init(
            id: try row.value("id"),
            tenantID: try row.value("tenant_id"),
            secretHash: [UInt8](try row.value("secret_hash", as: Data.self)),
            createdAt: try row.date("created_at"),
            lastUsedAt: try row.dateIfPresent("last_used_at"),
            expiresAt: try row.dateIfPresent("expires_at"),
            revokedAt: try row.dateIfPresent("revoked_at")
        )
    }
}

extension OperatorRecord {
    init(row: PostgresRow) throws {
        let row = row.makeRandomAccess()
        let id: String = try row.value("id")
        let roleName: String = try row.value("role")
        guard let role = OperatorRole(rawValue: roleName) else {
            throw StoreError.unavailable("operator \(id) has an unknown role \"\(roleName)\"")
        }
        self.init(
            id: id,
            name: try row.value("name"),
            role: role,
            secretHash: [UInt8](try row.value("secret_hash", as: Data.self)),
            createdAt: try row.date("created_at"),
            revokedAt: try row.dateIfPresent("revoked_at")
        )
    }
}

extension Receipt {
    init(row: PostgresRow) throws {
        let row = row.makeRandomAccess()
        let id: String = try row.value("id")
        let providerName: String = try row.value("provider")
        guard let provider = Provider(rawValue: providerName) else {
            throw StoreError.unavailable("receipt \(id) names an unknown provider \"\(providerName)\"")
        }
        let statusName: String = try row.value("status")
        guard let status = ReceiptStatus(rawValue: statusName) else {
            throw StoreError.unavailable("receipt \(id) has an unknown status \"\(statusName)\"")
        }
        let eventName: String? = try row.value("live_activity_event")
        let liveActivityEvent = try eventName.map { name in
            guard let event = LiveActivityEvent(rawValue: name) else {
                throw StoreError.unavailable("receipt \(id) has an unknown Live Activity event \"\(name)\"")
            }
            return event
        }
        self.init(
            id: id,
            tenantID: try row.value("tenant_id"),
            keyID: try row.value("key_id"),
            provider: provider,
            tokenFingerprint: try row.value("token_fingerprint"),
            isCritical: try row.value("is_critical"),
            status: status,
            errorCode: try row.value("error_code"),
            message: try row.value("message"),
            removeToken: try row.value("remove_token"),
            providerMessageID: try row.value("provider_message_id"),
            expoTicketID: try row.value("expo_ticket_id"),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at"),
            expiresAt: try row.date("expires_at"),
            app: try row.value("app"),
            liveActivityEvent: liveActivityEvent
        )
    }
}

extension UsageRow {
    init(row: PostgresRow) throws {
        let row = row.makeRandomAccess()
        let name: String = try row.value("provider")
        guard let provider = Provider(rawValue: name) else {
            throw StoreError.unavailable("usage names an unknown provider \"\(name)\"")
        }
        self.init(
            day: try row.value("day"),
            provider: provider,
            counts: UsageCounts(
                delivered: try row.value("delivered"),
                tokenInvalid: try row.value("token_invalid"),
                rejected: try row.value("rejected"),
                rateLimited: try row.value("rate_limited"),
                failed: try row.value("failed"),
                accepted: try row.value("accepted"),
                notAdmitted: try row.value("not_admitted"),
                critical: try row.value("critical")
            ),
            app: try row.value("app")
        )
    }
}
