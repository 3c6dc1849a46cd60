package import Foundation
package import RelayCore
package import RelayStore

/// The `before` and `after` states of admin audit records: what an operator changed, as JSON objects.
///
/// Snapshots hold configuration and state only. They never hold a secret or a secret's hash (a key's or an operator
/// token's `secretHash`), and nothing that changes by itself while the relay runs (a key's `lastUsedAt`), so that
/// `before` and `after` differ exactly where the action changed something. Dates are ISO 8601 in UTC with
/// milliseconds, like every time in the audit log.
extension Tenant {
    package var auditSnapshot: JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id),
            "name": .string(name),
            "limits": limits.json,
            "allowCriticalAlerts": .bool(allowCriticalAlerts),
            "disabled": .bool(disabled),
            "createdAt": auditTime(createdAt),
            // `null` says "every configured provider"; a list names the only ones allowed.
            "allowedProviders": allowedProviders.map { .array($0.map(\.rawValue).sorted().map(JSONValue.string)) }
                ?? .null,
        ]
        if let criticalChannel { fields["criticalChannel"] = .string(criticalChannel) }
        // Left out for a tenant of the default app only, as every tenant was before there were several apps, so that
        // its snapshots read as they always did.
        if !hasDefaultApps {
            fields["apps"] = .array(apps.map(JSONValue.string))
            fields["defaultApp"] = .string(defaultApp)
        }
        if let note { fields["note"] = .string(note) }
        if let deletedAt { fields["deletedAt"] = auditTime(deletedAt) }
        return .object(fields)
    }
}

extension TenantKeyRecord {
    /// The key's id, tenant and dates; never its secret hash, nor `lastUsedAt`.
    package var auditSnapshot: JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id),
            "tenantID": .string(tenantID),
            "createdAt": auditTime(createdAt),
        ]
        if let expiresAt { fields["expiresAt"] = auditTime(expiresAt) }
        if let revokedAt { fields["revokedAt"] = auditTime(revokedAt) }
        return .object(fields)
    }
}

extension OperatorRecord {
    /// The operator's id, name, role and dates; never its secret hash.
    package var auditSnapshot: JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id),
            "name": .string(name),
            "role": .string(role.rawValue),
            "createdAt": auditTime(createdAt),
        ]
        if let revokedAt { fields["revokedAt"] = auditTime(revokedAt) }
        return .object(fields)
    }
}

extension AuditEntry {
    /// An `admin` entry: `action` (`tenant.update`, `key.revoke`, …) as the outcome, who did it, what it touched,
    /// and the state before and after.
    ///
    /// - Parameters:
    ///   - action: The action's name, recorded as the outcome.
    ///   - actor: `cli:<unix user>` or `operator:<name>`.
    ///   - before: The state before the action; `nil` for a creation.
    ///   - after: The state after; `nil` for an action that removes something outright.
    package static func admin(
        _ action: String,
        actor: String,
        time: Date,
        tenantID: String? = nil,
        keyID: String? = nil,
        before: JSONValue? = nil,
        after: JSONValue? = nil,
        detail: String? = nil
    ) -> AuditEntry {
        AuditEntry(
            timeMillis: AuditTime.millis(time), event: .admin, tenantID: tenantID, keyID: keyID, outcome: action,
            actor: actor,
            before: before, after: after, detail: detail
        )
    }
}

private func auditTime(_ date: Date) -> JSONValue {
    .string(AuditTime.iso8601(millis: AuditTime.millis(date)))
}
