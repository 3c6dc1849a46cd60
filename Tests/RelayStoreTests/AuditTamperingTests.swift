import Foundation
import GRDB
import RelayCore
import Testing

@testable import RelayStore

/// `verifyAuditChain` on a SQLite file that somebody edited behind the relay's back.
@Suite(.timeLimit(.minutes(1)))
struct AuditTamperingTests {
    /// A file store holding 10 linked records of chain "i1"; `tamper` edits the table directly.
    func verify(after tamper: (Database) throws -> Void) async throws -> AuditVerification {
        let folder = try TemporaryFolder()
        defer { folder.remove() }
        let store = try SQLiteStore(path: folder.path("relay.db"))
        try await store.migrate()
        try await store.commit(StoreBatch(audit: AuditStoreConformanceTests.records(count: 10)))
        try store.writer.write(tamper)
        return try await store.verifyAuditChain("i1")
    }

    @Test func untouchedChainIsIntact() async throws {
        #expect(try await verify(after: { _ in }).isIntact)
    }

    @Test func modifiedRecordIsNamed() async throws {
        let verification = try await verify { db in
            try db.execute(sql: "UPDATE audit_records SET outcome = 'ok' WHERE seq = 5")
        }
        #expect(verification.problem?.kind == .modified)
        #expect(verification.problem?.seq == 5)
    }

    @Test func deletedRecordIsNamed() async throws {
        let verification = try await verify { db in
            try db.execute(sql: "DELETE FROM audit_records WHERE seq = 6")
        }
        #expect(verification.problem?.kind == .deleted)
        #expect(verification.problem?.seq == 6)
    }

    @Test func reorderedRecordsAreNamed() async throws {
        let verification = try await verify { db in
            // Swap the places of seq 3 and 4 in the table: the rows keep their content, the order changes.
            try db.execute(sql: "UPDATE audit_records SET position = -1 WHERE seq = 3")
            try db.execute(sql: "UPDATE audit_records SET position = 3 WHERE seq = 4")
            try db.execute(sql: "UPDATE audit_records SET position = 4 WHERE seq = 3")
        }
        #expect(verification.problem?.kind == .reordered)
        #expect(verification.problem?.message.contains("seq 3") == true)
    }
}
