import Crypto
import Foundation

/// The public half of an ``AuditSigningKey``: what an auditor needs to check checkpoints.
package struct AuditPublicKey: Sendable, Equatable {
    private let key: Curve25519.Signing.PublicKey
    /// The raw 32-byte key.
    private let raw: [UInt8]
    /// The first 16 hex digits of the SHA-256 of the raw key: short enough to print, long enough to tell keys apart.
    package let keyID: String

    init(key: Curve25519.Signing.PublicKey) {
        self.key = key
        self.raw = Array(key.rawRepresentation)
        self.keyID = String(AuditHex.encode(Array(SHA256.hash(data: raw))).prefix(16))
    }

    /// Reads a raw 32-byte public key written in base64; whitespace is ignored.
    /// - Throws: ``AuditKeyError`` naming what is wrong.
    package init(base64: String) throws(AuditKeyError) {
        let raw = try AuditKeyError.decode(base64: base64, role: .public)
        do {
            self.init(key: try Curve25519.Signing.PublicKey(rawRepresentation: raw))
        } catch {
            throw .invalidKey(.public)
        }
    }

    /// The raw public key in base64.
    package var base64: String {
        Data(raw).base64EncodedString()
    }

    /// Whether `checkpoint` was signed by this key: its key id is this key's and its signature verifies over
    /// ``AuditCheckpoint/signedMessage``.
    package func isValidSignature(_ checkpoint: AuditCheckpoint) -> Bool {
        checkpoint.keyID == keyID && key.isValidSignature(checkpoint.signature, for: checkpoint.signedMessage)
    }

    package static func == (lhs: AuditPublicKey, rhs: AuditPublicKey) -> Bool {
        lhs.raw == rhs.raw
    }
}
