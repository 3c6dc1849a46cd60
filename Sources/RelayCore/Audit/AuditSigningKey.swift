import Crypto
package import Foundation

/// The Ed25519 key that signs ``AuditCheckpoint``s.
///
/// Kept outside the store (configuration or a secret file), so that whoever can edit the store cannot forge
/// checkpoints. Its text form is the raw 32-byte private key in base64.
package struct AuditSigningKey: Sendable {
    private let key: Curve25519.Signing.PrivateKey

    private init(key: Curve25519.Signing.PrivateKey) {
        self.key = key
    }

    /// Reads a raw 32-byte private key written in base64; whitespace is ignored.
    /// - Throws: ``AuditKeyError`` naming what is wrong (never the key).
    package init(base64: String) throws(AuditKeyError) {
        let raw = try AuditKeyError.decode(base64: base64, role: .signing)
        do {
            self.init(key: try Curve25519.Signing.PrivateKey(rawRepresentation: raw))
        } catch {
            throw .invalidKey(.signing)
        }
    }

    /// A new random key.
    package static func generate() -> AuditSigningKey {
        AuditSigningKey(key: Curve25519.Signing.PrivateKey())
    }

    /// The raw private key in base64, the form ``init(base64:)`` reads.
    package var base64: String {
        key.rawRepresentation.base64EncodedString()
    }

    package var publicKey: AuditPublicKey {
        AuditPublicKey(key: key.publicKey)
    }

    /// Signs the statement that record `seq` of `chain` has link `link`.
    ///
    /// Not throwing: Ed25519 signing cannot fail for a valid key (swift-crypto's signature is only declared
    /// `throws`). Should the library ever report a failure, the checkpoint carries an empty signature, which no
    /// verifier accepts, so the failure shows up as a bad checkpoint rather than as a silently trusted one.
    package func checkpoint(
        chain: String, seq: Int64, link: [UInt8], time: Date, madeAtExport: Bool = false
    ) -> AuditCheckpoint {
        let keyID = publicKey.keyID
        let timeMillis = AuditTime.millis(time)
        let message = AuditCheckpoint.signedMessage(
            chain: chain, seq: seq, link: link, timeMillis: timeMillis, keyID: keyID, madeAtExport: madeAtExport)
        let signature = (try? key.signature(for: message)).map { Array($0) } ?? []
        return AuditCheckpoint(
            chain: chain, seq: seq, link: link, timeMillis: timeMillis, keyID: keyID, signature: signature,
            madeAtExport: madeAtExport)
    }
}
