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
        guard presented.hasPrefix(prefix) else { return nil }
        let rest = presented.dropFirst(prefix.count)
        guard let separator = rest.firstIndex(of: "_") else { return nil }
        let id = String(rest[..<separator])
        let secret = String(rest[rest.index(after: separator)...])
        guard id.count == 16, id.allSatisfy(\.isHexDigit), secret.count >= 43, secret.count <= 64 else { return nil }
        return (id, secret)
    }

    package static func hash(secret: String) -> [UInt8] {
        Array(SHA256.hash(data: Data(secret.utf8)))
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
