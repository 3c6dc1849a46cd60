import Crypto
import Foundation
import RelayCore

/// Tenant keys: `prk_<id>_<secret>`, with a 64-bit id and a 256-bit secret. Only the id and the SHA-256 of the
/// secret are stored, so a leaked database opens nothing; the secret is shown once, when the key is issued.
package enum TenantKeys {
    package static let prefix = "prk_"

    /// A freshly issued key: show `key` once, store `record`.
    package struct Issued: Sendable {
        package var id: String
        package var key: String
        package var secretHash: [UInt8]
    }

    /// Makes a new key (or, with another prefix, an operator token of the same shape).
    package static func issue(prefix: String = prefix) -> Issued {
        let id = AuditHex.encode(randomBytes(8))
        let secret = base64URL(randomBytes(32))
        return Issued(id: id, key: "\(prefix)\(id)_\(secret)", secretHash: hash(secret: secret))
    }

    /// Splits a presented key into id and secret; `nil` when it does not look like a key at all.
    package static func parse(_ presented: String, prefix: String = prefix) -> (id: String, secret: String)? {
        // On the UTF-8 bytes: a key is ASCII, and walking it by Character (grapheme breaking) was about 1 % of the
        // relay's CPU for a single-message request.
        let bytes = presented.utf8
        guard bytes.starts(with: prefix.utf8) else { return nil }
        let rest = bytes.dropFirst(prefix.utf8.count)
        guard let separator = rest.firstIndex(of: UInt8(ascii: "_")) else { return nil }
        let id = rest[..<separator]
        let secret = rest[rest.index(after: separator)...]
        guard id.count == 16, id.allSatisfy(AuditHex.isDigit), (43...64).contains(secret.count) else { return nil }
        return (String(Substring(id)), String(Substring(secret)))
    }

    package static func hash(secret: String) -> [UInt8] {
        var sha = SHA256()
        var secret = secret
        secret.withUTF8 { sha.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return Array(sha.finalize())
    }

    /// Compares the presented secret's hash with the stored one in time that does not depend on where they differ.
    package static func matches(secret: String, hash stored: [UInt8]) -> Bool {
        let presented = hash(secret: secret)
        guard presented.count == stored.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(presented, stored) { difference |= a ^ b }
        return difference == 0
    }

    /// The key id of something presented as a key, for logs: never the secret.
    package static func keyID(of presented: String) -> String? {
        parse(presented)?.id
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// Operator tokens for `/admin/v1`: `pro_<id>_<secret>`, the shape of tenant keys with their own prefix, so neither
/// can ever be taken for the other. Stored the same way: the id and the SHA-256 of the secret.
package enum OperatorTokens {
    package static let prefix = "pro_"

    package static func issue() -> TenantKeys.Issued { TenantKeys.issue(prefix: prefix) }

    package static func parse(_ presented: String) -> (id: String, secret: String)? {
        TenantKeys.parse(presented, prefix: prefix)
    }
}

/// Token fingerprints: a keyed hash, so receipts, logs and the audit log can tell tokens apart without holding them.
package struct TokenFingerprinter: Sendable {
    /// HMAC keyed once; each fingerprint goes on from a copy of it, so the key's pads are not hashed again for every
    /// token (`relay-bench relay`, batched phase: keying per token was about 2 % of the relay's CPU).
    private let keyed: HMAC<SHA256>

    package init(key: [UInt8]) {
        self.keyed = HMAC<SHA256>(key: SymmetricKey(data: key))
    }

    /// 32 hex characters of HMAC-SHA-256. APNs tokens are compared case-insensitively, so they are lowercased first.
    package func fingerprint(_ token: String, provider: String) -> String {
        var mac = keyed
        var text =
            provider == "apns" && token.utf8.contains(where: { (65...90).contains($0) }) ? token.lowercased() : token
        text.withUTF8 { mac.update(data: UnsafeRawBufferPointer($0)) }
        return mac.finalize().withUnsafeBytes { AuditHex.encode(UnsafeRawBufferPointer(rebasing: $0.prefix(16))) }
    }
}
