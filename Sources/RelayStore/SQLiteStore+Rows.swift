import Foundation
import GRDB
import RelayCore

/// Row decoding for ``SQLiteStore``: the column names of `SQLiteStore+Migrations.swift`.
extension Tenant {
    init(row: Row) throws {
        self.init(
            id: try row.decode(forColumn: "id"),
            name: try row.decode(forColumn: "name"),
            limits: RateLimits(
                ratePerSecond: try row.decode(forColumn: "rate_per_second"),
                burst: try row.decode(forColumn: "burst"),
                dailyQuota: try row.decode(forColumn: "daily_quota"),
                perDevicePerMinute: try row.decode(forColumn: "per_device_per_minute"),
                criticalReservePerHour: try row.decode(forColumn: "critical_reserve_per_hour")
            ),
            allowCriticalAlerts: try row.decode(forColumn: "allow_critical_alerts"),
            disabled: try row.decode(forColumn: "disabled"),
            createdAt: try row.decodeDate(forColumn: "created_at"),
            allowedProviders: try Tenant.providers(fromColumn: row.decode(forColumn: "allowed_providers")),
            criticalChannel: try row.decode(forColumn: "critical_channel"),
            apps: Tenant.apps(fromColumn: try row.decode(forColumn: "apps")),
            defaultApp: try row.decode(forColumn: "default_app"),
            note: try row.decode(forColumn: "note"),
            deletedAt: try row.decodeDateIfPresent(forColumn: "deleted_at")
        )
    }
}

extension OperatorRecord {
    init(row: Row) throws {
        let id: String = try row.decode(forColumn: "id")
        let roleName: String = try row.decode(forColumn: "role")
        guard let role = OperatorRole(rawValue: roleName) else {
            throw StoreError.unavailable("operator \(id) has an unknown role \"\(roleName)\"")
        }
        self.init(
            id: id,
            name: try row.decode(forColumn: "name"),
            role: role,
            secretHash: [UInt8](try row.decode(Data.self, forColumn: "secret_hash")),
            createdAt: try row.decodeDate(forColumn: "created_at"),
            revokedAt: try row.decodeDateIfPresent(forColumn: "revoked_at")
        )
    }
}

extension TenantKeyRecord {
    init(row: Row) throws {
        self.init(
            id: try row.decode(forColumn: "id"),
            tenantID: try row.decode(forColumn: "tenant_id"),
            secretHash: [UInt8](try row.decode(Data.self, forColumn: "secret_hash")),
            createdAt: try row.decodeDate(forColumn: "created_at"),
            lastUsedAt: try row.decodeDateIfPresent(forColumn: "last_used_at"),
            expiresAt: try row.decodeDateIfPresent(forColumn: "expires_at"),
            revokedAt: try row.decodeDateIfPresent(forColumn: "revoked_at")
        )
    }
}

extension Receipt {
    init(row: Row) throws {
        let id: String = try row.decode(forColumn: "id")
        let providerName: String = try row.decode(forColumn: "provider")
        guard let provider = Provider(rawValue: providerName) else {
            throw StoreError.unavailable("receipt \(id) names an unknown provider \"\(providerName)\"")
        }
        let statusName: String = try row.decode(forColumn: "status")
        guard let status = ReceiptStatus(rawValue: statusName) else {
            throw StoreError.unavailable("receipt \(id) has an unknown status \"\(statusName)\"")
        }
        let eventName: String? = try row.decode(forColumn: "live_activity_event")
        let liveActivityEvent = try eventName.map { name in
            guard let event = LiveActivityEvent(rawValue: name) else {
                throw StoreError.unavailable("receipt \(id) has an unknown Live Activity event \"\(name)\"")
            }
            return event
        }
        self.init(
            id: id,
            tenantID: try row.decode(forColumn: "tenant_id"),
            keyID: try row.decode(forColumn: "key_id"),
            provider: provider,
            tokenFingerprint: try row.decode(forColumn: "token_fingerprint"),
            isCritical: try row.decode(forColumn: "is_critical"),
            status: status,
            errorCode: try row.decode(forColumn: "error_code"),
            message: try row.decode(forColumn: "message"),
            removeToken: try row.decode(forColumn: "remove_token"),
            providerMessageID: try row.decode(forColumn: "provider_message_id"),
            expoTicketID: try row.decode(forColumn: "expo_ticket_id"),
            createdAt: try row.decodeDate(forColumn: "created_at"),
            updatedAt: try row.decodeDate(forColumn: "updated_at"),
            expiresAt: try row.decodeDate(forColumn: "expires_at"),
            app: try row.decode(forColumn: "app"),
            liveActivityEvent: liveActivityEvent
        )
    }
}

extension JournalEntry {
    init(row: Row) throws {
        self.init(
            receiptID: try row.decode(forColumn: "receipt_id"),
            tenantID: try row.decode(forColumn: "tenant_id"),
            createdAt: try row.decodeDate(forColumn: "created_at"),
            deadline: try row.decodeDate(forColumn: "deadline"),
            attempts: try row.decode(forColumn: "attempts"),
            claimedBy: try row.decode(forColumn: "claimed_by"),
            leaseUntil: try row.decodeDate(forColumn: "lease_until"),
            sealed: [UInt8](try row.decode(Data.self, forColumn: "sealed"))
        )
    }
}

extension Row {
    /// A date stored as UNIX seconds.
    fileprivate func decodeDate(forColumn column: String) throws -> Date {
        Date(timeIntervalSince1970: try decode(Double.self, forColumn: column))
    }

    fileprivate func decodeDateIfPresent(forColumn column: String) throws -> Date? {
        try decode(Double?.self, forColumn: column).map(Date.init(timeIntervalSince1970:))
    }
}

extension Date {
    /// How ``SQLiteStore`` stores dates: seconds since 1970, so SQL compares them and `sqlite3` reads them.
    var unixSeconds: Double { timeIntervalSince1970 }
}
