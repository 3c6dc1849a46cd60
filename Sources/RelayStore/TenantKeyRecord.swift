package import Foundation

/// A tenant key as stored: its id and the SHA-256 of its secret, never the secret.
package struct TenantKeyRecord: Sendable, Equatable {
    package var id: String
    package var tenantID: String
    package var secretHash: [UInt8]
    package var createdAt: Date
    package var lastUsedAt: Date?
    package var expiresAt: Date?
    package var revokedAt: Date?

    package init(
        id: String,
        tenantID: String,
        secretHash: [UInt8],
        createdAt: Date = Date(),
        lastUsedAt: Date? = nil,
        expiresAt: Date? = nil,
        revokedAt: Date? = nil
    ) {
        self.id = id
        self.tenantID = tenantID
        self.secretHash = secretHash
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }

    /// Whether the key opens the API at `now`.
    package func isActive(at now: Date) -> Bool {
        revokedAt == nil && (expiresAt.map { $0 > now } ?? true)
    }
}
