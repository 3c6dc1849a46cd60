import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The admin audit records of the command-line tools: linked, signed, with before/after and never a secret.
@Suite(.timeLimit(.minutes(1)))
struct CLIAdminAuditTests {
    @Test(arguments: CLIStoreKind.available)
    func adminActionsAppendLinkedSignedRecordsWithBeforeAndAfter(kind: CLIStoreKind) async throws {
        try await kind.withStore { store in
            let key = AuditSigningKey.generate()
            let writer = AdminAuditWriter(store: store, chain: "relay-1:cli", actor: "cli:alice", signingKey: key)

            var tenant = Tenant(name: "acme", note: "ticket 42")
            try await store.createTenant(tenant)
            try await writer.record("tenant.create", tenantID: tenant.id, after: tenant.auditSnapshot)

            let before = tenant
            tenant.allowedProviders = [.fcm, .apns]
            tenant.criticalChannel = "pages"
            try await store.updateTenant(tenant)
            try await writer.record(
                "tenant.update", tenantID: tenant.id, before: before.auditSnapshot, after: tenant.auditSnapshot
            )

            let issued = TenantKeys.issue()
            let keyRecord = TenantKeyRecord(id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash)
            try await store.createKey(keyRecord)
            try await writer.record("key.issue", tenantID: tenant.id, keyID: issued.id, after: keyRecord.auditSnapshot)

            let token = OperatorTokens.issue()
            let operatorRecord = OperatorRecord(id: token.id, name: "bob", role: .auditor, secretHash: token.secretHash)
            try await store.createOperator(operatorRecord)
            try await writer.record("operator.create", after: operatorRecord.auditSnapshot)

            let records = try await store.auditRecords(chain: "relay-1:cli", after: 0, limit: 100).map(\.record)
            #expect(records.map(\.seq) == [1, 2, 3, 4])
            #expect(records.map(\.outcome) == ["tenant.create", "tenant.update", "key.issue", "operator.create"])
            #expect(records.allSatisfy { $0.event == .admin && $0.actor == "cli:alice" })
            #expect(records[0].before == nil)
            #expect(records[0].after?.objectValue?["name"] == .string("acme"))
            #expect(records[1].before?.objectValue?["allowedProviders"] == .null)
            #expect(records[1].after?.objectValue?["allowedProviders"] == .array([.string("apns"), .string("fcm")]))
            #expect(records[1].after?.objectValue?["criticalChannel"] == .string("pages"))
            #expect(records[2].keyID == issued.id && records[2].tenantID == tenant.id)
            #expect(records[3].after?.objectValue?["role"] == .string("auditor"))

            // Never a secret, nor a secret's hash, in any form.
            let text = records.map { String(decoding: $0.canonicalBytes(), as: UTF8.self) }.joined()
            for hash in [issued.secretHash, token.secretHash] {
                #expect(!text.contains(hexString(hash)))
                #expect(!text.contains(Data(hash).base64EncodedString()))
            }
            #expect(!text.contains(issued.key) && !text.contains(token.key))
            #expect(!text.contains("secretHash"))

            // Every command signs its new head, so the chain verifies to its end.
            let verification = try await store.verifyAuditChain(
                "relay-1:cli", publicKey: key.publicKey, requireSignedEnd: true
            )
            #expect(verification.isIntact, "\(String(describing: verification.problem))")
            #expect(verification.checkpointsVerified == 4)
        }
    }

    @Test func concurrentWritersRetryOnTheNewHead() async throws {
        try await CLIStoreKind.sqlite.withStore { store in
            let key = AuditSigningKey.generate()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writerIndex in 0..<3 {
                    group.addTask {
                        let writer = AdminAuditWriter(
                            store: store, chain: "relay-1:cli", actor: "cli:w\(writerIndex)", signingKey: key,
                            maxAttempts: 50
                        )
                        for action in 0..<8 {
                            try await writer.record("tenant.update", detail: "\(writerIndex).\(action)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            let records = try await store.auditRecords(chain: "relay-1:cli", after: 0, limit: 100).map(\.record)
            #expect(records.map(\.seq) == Array(1...24))
            #expect(Set(records.compactMap(\.detail)).count == 24)
            let verification = try await store.verifyAuditChain("relay-1:cli", publicKey: key.publicKey)
            #expect(verification.isIntact, "\(String(describing: verification.problem))")
        }
    }

    @Test func aDisabledAuditLogWritesNothing() async throws {
        let store = MemoryStore()
        let writer = AdminAuditWriter(
            store: store, chain: "relay-1:cli", actor: "cli:alice", signingKey: nil, enabled: false
        )
        #expect(try await writer.record("tenant.delete") == nil)
        #expect(try await store.auditChains().isEmpty)
    }

    @Test func theCLIWriterUsesTheInstanceChainAndKey() async throws {
        let key = AuditSigningKey.generate()
        let audit = RelayConfiguration.Audit(instance: "relay-9", signingKey: .init(key.base64))
        let store = MemoryStore()
        let writer = AdminAuditWriter(configuration: audit, store: store, actor: "cli:root")
        try await writer.record("operator.revoke")
        #expect(try await store.auditChains() == ["relay-9:cli"])
        #expect(try await store.auditCheckpoints(chain: "relay-9:cli").map(\.keyID) == [key.publicKey.keyID])
    }

    @Test func snapshotsHoldStateButNeverSecretsOrUsage() {
        let record = TenantKeyRecord(
            id: "00112233aabbccdd", tenantID: "t", secretHash: [1, 2, 3], createdAt: AuditFixtures.now,
            lastUsedAt: AuditFixtures.now, expiresAt: AuditFixtures.now.addingTimeInterval(60)
        )
        #expect(
            record.auditSnapshot
                == .object([
                    "id": .string("00112233aabbccdd"), "tenantID": .string("t"),
                    "createdAt": .string("2027-01-15T08:00:00.000Z"), "expiresAt": .string("2027-01-15T08:01:00.000Z"),
                ])
        )
        let deleted = Tenant(name: "gone", deletedAt: AuditFixtures.now)
        #expect(deleted.auditSnapshot.objectValue?["deletedAt"] == .string("2027-01-15T08:00:00.000Z"))
        let revoked = OperatorRecord(
            id: "op", name: "carol", role: .admin, secretHash: [9], revokedAt: AuditFixtures.now)
        #expect(revoked.auditSnapshot.objectValue?.keys.sorted() == ["createdAt", "id", "name", "revokedAt", "role"])
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
}
