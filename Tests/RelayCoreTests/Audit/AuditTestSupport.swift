import Foundation

@testable import RelayCore

/// Builders shared by the audit tests.
enum AuditFixtures {
    /// 2027-01-15T08:00:00.000Z in milliseconds.
    static let t0: Int64 = 1_800_000_000_000

    /// A fixed signing key (bytes 1…32), so tests are reproducible.
    static let signingKeyBase64 = Data((1...32).map { UInt8($0) }).base64EncodedString()

    static func signingKey() throws -> AuditSigningKey {
        try AuditSigningKey(base64: signingKeyBase64)
    }

    /// The n-th entry of a test chain: pushes with varied fields, and an admin action every tenth entry.
    static func entry(_ n: Int) -> AuditEntry {
        if n % 10 == 0 {
            return AuditEntry(
                timeMillis: t0 + Int64(n) * 1000, event: .admin, tenantID: "tenant-\(n % 3)", outcome: "tenant.update",
                actor: "operator:alice", before: .object(["rate": .int(10)]), after: .object(["rate": .int(20)]))
        }
        return AuditEntry(
            timeMillis: t0 + Int64(n) * 1000, event: .push, tenantID: "tenant-\(n % 3)", keyID: "key\(n % 2)",
            requestID: "req-\(n)", client: "10.0.0.\(n % 250)", provider: n.isMultiple(of: 2) ? "apns" : "fcm",
            tokenFingerprint: "fp\(n)", critical: n.isMultiple(of: 3), outcome: "ok", upstreamStatus: 200, attempts: 1,
            latencyMillis: 40 + n)
    }

    /// `count` records of chain `chain`, from seq 1.
    static func records(_ count: Int, chain: String = "chain-a") -> [AuditRecord] {
        var writer = AuditChain(chain: chain, head: nil)
        return (1...count).map { writer.append(entry($0)) }
    }

    /// Feeds records and returns the verification and every problem `feed` returned.
    static func verify(
        _ records: [AuditRecord], anchor: AuditAnchor? = nil, publicKey: AuditPublicKey? = nil,
        requireSignedEnd: Bool = false
    ) -> (AuditVerification, [AuditProblem]) {
        var verifier = AuditVerifier(anchor: anchor ?? .genesis(chain: "chain-a"), publicKey: publicKey)
        let reported = records.compactMap { verifier.feed($0) }
        return (verifier.finish(requireSignedEnd: requireSignedEnd), reported)
    }
}
