import Foundation

/// Why an audit key could not be read. Messages name the key's role and sizes, never key material.
package enum AuditKeyError: Error, Equatable, CustomStringConvertible {
    /// Which key was being read.
    package enum Role: String, Sendable {
        case signing = "audit signing key"
        case `public` = "audit public key"
    }

    /// The text is not base64.
    case notBase64(Role)
    /// The text is base64, of the wrong number of bytes.
    case wrongLength(Role, bytes: Int)
    /// The bytes are not a usable Ed25519 key.
    case invalidKey(Role)

    package var description: String {
        switch self {
        case .notBase64(let role):
            "\(role.rawValue): expected base64 of \(AuditKeyError.keyLength) bytes, got text that is not base64"
        case .wrongLength(let role, let bytes):
            "\(role.rawValue): expected base64 of \(AuditKeyError.keyLength) bytes, got \(bytes) bytes"
        case .invalidKey(let role):
            "\(role.rawValue): not a valid Ed25519 key"
        }
    }

    /// Raw Ed25519 private keys (seeds) and public keys are both 32 bytes.
    static let keyLength = 32

    /// The raw bytes of a base64 key of `keyLength` bytes; whitespace anywhere (line breaks of a file or an
    /// environment variable) is ignored.
    static func decode(base64 text: String, role: Role) throws(AuditKeyError) -> [UInt8] {
        let compact = String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
        guard let data = Data(base64Encoded: compact) else { throw .notBase64(role) }
        guard data.count == keyLength else { throw .wrongLength(role, bytes: data.count) }
        return Array(data)
    }
}
