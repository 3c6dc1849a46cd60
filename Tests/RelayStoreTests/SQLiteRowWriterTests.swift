import Foundation
import GRDB
import Testing

@testable import RelayStore

/// `SQLiteRowWriter` against GRDB's own binding: the same values written both ways read back with the same SQLite
/// type and the same bytes, and a failed row leaves the statement usable.
@Suite struct SQLiteRowWriterTests {
    private struct Values {
        var integer: Int64
        var optionalInteger: Int?
        var flag: Bool?
        var real: Double
        var text: String?
        var bytes: [UInt8]
    }

    private static let samples: [Values] = [
        Values(integer: 0, optionalInteger: nil, flag: nil, real: 0, text: nil, bytes: [1]),
        Values(integer: -1, optionalInteger: 0, flag: false, real: -0.5, text: "", bytes: [0, 0, 0]),
        Values(
            integer: .max, optionalInteger: .min, flag: true, real: 1_764_000_000.123, text: "Grüße, 世界 🚨",
            bytes: Array(0...255)),
        Values(
            integer: .min, optionalInteger: 42, flag: true, real: .greatestFiniteMagnitude, text: "a\u{0}b",
            bytes: [0xFF]),
    ]

    private static let insert = "INSERT INTO t (i, oi, f, r, s, b) VALUES (?, ?, ?, ?, ?, ?)"

    private static func table(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE t (n INTEGER PRIMARY KEY, i, oi, f, r, s, b)")
    }

    /// Each column's SQLite type and value, as SQLite itself renders them (`quote` shows text and blob bytes).
    private static func dump(_ db: Database) throws -> [[String]] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT typeof(i), quote(i), typeof(oi), quote(oi), typeof(f), quote(f), typeof(r), quote(r),
                    typeof(s), quote(s), typeof(b), quote(b) FROM t ORDER BY n
                """
        ).map { row in (0..<row.count).map { row[$0] as String? ?? "?" } }
    }

    @Test(.timeLimit(.minutes(1)))
    func rowsReadBackAsGRDBWritesThem() throws {
        let byGRDB = try DatabaseQueue()
        let byWriter = try DatabaseQueue()
        try byGRDB.write { db in
            try Self.table(db)
            for value in Self.samples {
                try db.execute(
                    sql: Self.insert,
                    arguments: [
                        value.integer, value.optionalInteger, value.flag, value.real, value.text, Data(value.bytes),
                    ]
                )
            }
        }
        try byWriter.write { db in
            try Self.table(db)
            var row = SQLiteRowWriter(try db.cachedStatement(sql: Self.insert), in: db)
            for value in Self.samples {
                try row.bind(value.integer)
                try row.bind(value.optionalInteger)
                try row.bind(value.flag)
                try row.bind(value.real)
                try row.bind(value.text)
                try row.bind(bytes: value.bytes)
                try row.step()
            }
        }
        let expected = try byGRDB.read(Self.dump)
        #expect(expected.count == Self.samples.count)
        #expect(try byWriter.read(Self.dump) == expected)
        // The NUL ends the text both ways, as GRDB binds it.
        #expect(expected[3][9] == "'a'")
    }

    @Test(.timeLimit(.minutes(1)))
    func aFailedRowThrowsAndTheStatementWritesTheNext() throws {
        let queue = try DatabaseQueue()
        let sql = "INSERT INTO u (id, v) VALUES (?, ?)"
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE u (id TEXT PRIMARY KEY, v INTEGER NOT NULL)")
            var row = SQLiteRowWriter(try db.cachedStatement(sql: sql), in: db)
            try row.bind("a")
            try row.bind(1 as Int64)
            try row.step()
            try row.bind("a")
            try row.bind(2 as Int64)
            let error = #expect(throws: DatabaseError.self) { try row.step() }
            #expect(error?.resultCode == .SQLITE_CONSTRAINT)
            #expect(error?.sql == sql)
            // The values are not part of the error.
            #expect(error.map { "\($0)".contains("'a'") } == false)
            try row.bind("b")
            try row.bindNull()
            #expect(throws: DatabaseError.self) { try row.step() }
            try row.bind("c")
            try row.bind(3 as Int64)
            try row.step()
        }
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT id, v FROM u ORDER BY id") }
        #expect(rows.map { $0["id"] as String? } == ["a", "c"])
        #expect(rows.map { $0["v"] as Int64? } == [1, 3])
    }
}
