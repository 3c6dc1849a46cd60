package import Foundation
package import RelayCore

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
    /// The app whose credentials sent it (`default` for the top-level sections).
    package var app: String
    /// The `event` of a Live Activity push (`start`, `update`, `end`); `nil` for any other push. Not content: the
    /// activity's state and attributes are never kept.
    package var liveActivityEvent: LiveActivityEvent?

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
        expiresAt: Date,
        app: String = AppName.default,
        liveActivityEvent: LiveActivityEvent? = nil
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
        self.app = app
        self.liveActivityEvent = liveActivityEvent
    }
}

extension Receipt {
    /// The typed error code, from which each API renders its own (the native code, Expo's, OneUptime's status).
    package var code: OutcomeCode? { errorCode.map { OutcomeCode($0) } }
}
