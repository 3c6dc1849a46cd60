package import Foundation
package import RelayCore

/// A self-hosted install that forwards pushes: its limits and policy.
package struct Tenant: Sendable, Equatable, Codable {
    package var id: String
    /// Unique, chosen by the operator (`pushrelay tenant create NAME`). A deleted tenant keeps its name.
    package var name: String
    package var limits: RateLimits
    /// Only tenants with this may send critical alerts, however a message spells criticality.
    package var allowCriticalAlerts: Bool
    package var disabled: Bool
    package var createdAt: Date
    /// The providers this tenant may push through; `nil` allows every configured one.
    package var allowedProviders: Set<Provider>?
    /// The Android notification channel of this tenant's critical alerts; `nil` uses `[android] critical_channel_id`.
    package var criticalChannel: String?
    /// The operator's free-text note (a contact, a ticket); never shown to the tenant.
    package var note: String?
    /// Set when the tenant was deleted. A deleted tenant authenticates nothing, but its receipts, usage and audit
    /// records stay.
    package var deletedAt: Date?

    package init(
        id: String = UUID.randomString(),
        name: String,
        limits: RateLimits = .init(),
        allowCriticalAlerts: Bool = false,
        disabled: Bool = false,
        createdAt: Date = Date(),
        allowedProviders: Set<Provider>? = nil,
        criticalChannel: String? = nil,
        note: String? = nil,
        deletedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.limits = limits
        self.allowCriticalAlerts = allowCriticalAlerts
        self.disabled = disabled
        self.createdAt = createdAt
        self.allowedProviders = allowedProviders
        self.criticalChannel = criticalChannel
        self.note = note
        self.deletedAt = deletedAt
    }

    package var isDeleted: Bool { deletedAt != nil }

    /// Whether the tenant may push through `provider`.
    package func allows(_ provider: Provider) -> Bool { allowedProviders?.contains(provider) ?? true }

    /// `allowed_providers` as stored: provider names joined by commas, sorted; `nil` for every provider.
    package var allowedProvidersColumn: String? {
        allowedProviders.map { $0.map(\.rawValue).sorted().joined(separator: ",") }
    }

    /// Reads `allowed_providers`.
    package static func providers(fromColumn value: String?) throws -> Set<Provider>? {
        guard let value else { return nil }
        var providers = Set<Provider>()
        for name in value.split(separator: ",") {
            guard let provider = Provider(rawValue: String(name)) else {
                throw StoreError.unavailable("a tenant names an unknown provider \"\(name)\"")
            }
            providers.insert(provider)
        }
        return providers
    }
}

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

/// The lifecycle of one notification's receipt.
package enum ReceiptStatus: String, Sendable, Codable, Equatable {
    /// Accepted; the outcome is not known yet (slow upstream, or an Expo receipt to come).
    case pending
    case ok
    case error
}

/// What the relay keeps about one notification, for `POST /v1/receipts` and Expo's getReceipts. Never the token,
/// only its fingerprint; never content.
package struct Receipt: Sendable, Equatable {
    package var id: String
    package var tenantID: String
    package var keyID: String
    package var provider: Provider
    package var tokenFingerprint: String
    package var isCritical: Bool
    package var status: ReceiptStatus
    /// The error code (`DeviceNotRegistered`, `ProviderUnavailable`, …) when `status` is `error`, spelled as stored;
    /// ``code`` reads it.
    package var errorCode: String?
    package var message: String?
    package var removeToken: Bool
    package var providerMessageID: String?
    /// Set while an Expo receipt is awaited for this ticket.
    package var expoTicketID: String?
    package var createdAt: Date
    package var updatedAt: Date
    package var expiresAt: Date

    package init(
        id: String,
        tenantID: String,
        keyID: String,
        provider: Provider,
        tokenFingerprint: String,
        isCritical: Bool,
        status: ReceiptStatus,
        errorCode: String? = nil,
        message: String? = nil,
        removeToken: Bool = false,
        providerMessageID: String? = nil,
        expoTicketID: String? = nil,
        createdAt: Date,
        updatedAt: Date,
        expiresAt: Date
    ) {
        self.id = id
        self.tenantID = tenantID
        self.keyID = keyID
        self.provider = provider
        self.tokenFingerprint = tokenFingerprint
        self.isCritical = isCritical
        self.status = status
        self.errorCode = errorCode
        self.message = message
        self.removeToken = removeToken
        self.providerMessageID = providerMessageID
        self.expoTicketID = expoTicketID
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.expiresAt = expiresAt
    }
}

extension Receipt {
    /// The typed error code, from which each API renders its own (the native code, Expo's, OneUptime's status).
    package var code: OutcomeCode? { errorCode.map { OutcomeCode($0) } }
}

/// A change to a receipt once its outcome is known.
package struct ReceiptUpdate: Sendable, Equatable {
    package var id: String
    package var status: ReceiptStatus
    package var errorCode: String?
    package var message: String?
    package var removeToken: Bool
    package var providerMessageID: String?
    package var expoTicketID: String?
    package var updatedAt: Date

    package init(
        id: String,
        status: ReceiptStatus,
        errorCode: String? = nil,
        message: String? = nil,
        removeToken: Bool = false,
        providerMessageID: String? = nil,
        expoTicketID: String? = nil,
        updatedAt: Date
    ) {
        self.id = id
        self.status = status
        self.errorCode = errorCode
        self.message = message
        self.removeToken = removeToken
        self.providerMessageID = providerMessageID
        self.expoTicketID = expoTicketID
        self.updatedAt = updatedAt
    }
}

/// Store failures callers can act on.
package enum StoreError: Error, Sendable, Equatable {
    /// A tenant with this name, or a key with this id, already exists.
    case duplicate(String)
    case notFound(String)
    /// The store URL or file is unusable.
    case unavailable(String)
    /// A commit's ``StoreBatch/receiptCloses`` named receipts (these ids) that are no longer pending; nothing of the
    /// commit was written.
    case receiptsAlreadyFinal([String])
}
