package import Foundation

/// What an operator token may do on `/admin/v1`.
package enum OperatorRole: String, Sendable, Codable, CaseIterable, Equatable {
    /// Everything: tenants, keys, operators, usage, audit.
    case admin
    /// Read-only: tenants, keys (never secrets), usage and the audit log.
    case auditor

    /// Whether the role may change anything.
    package var canWrite: Bool { self == .admin }
}

/// An operator token as stored: its id, role and the SHA-256 of its secret, never the secret.
package struct OperatorRecord: Sendable, Equatable {
    package var id: String
    /// Unique; who the audit log names for this token's actions (`operator:NAME`).
    package var name: String
    package var role: OperatorRole
    package var secretHash: [UInt8]
    package var createdAt: Date
    package var revokedAt: Date?

    package init(
        id: String,
        name: String,
        role: OperatorRole,
        secretHash: [UInt8],
        createdAt: Date = Date(),
        revokedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.role = role
        self.secretHash = secretHash
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }

    package var isActive: Bool { revokedAt == nil }
}
