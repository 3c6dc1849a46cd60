import GRDB
import GRDBSQLite

/// Writes the rows of one cached `INSERT` straight through SQLite's C API, for the statements that run once per
/// notification (a receipt, an audit record).
///
/// Written by hand because of a benchmark: GRDB's `execute(arguments:)` boxes every value of a row in an existential
/// (`StatementArguments(arrayLiteral:)`), turns each into a `DatabaseValue`, and binds them through one generic closure
/// per parameter, none of it specialised across modules. In the batched phase of `relay-bench relay` (APNs, see
/// Docs/benchmarks.md) that was about 8 % of the relay's CPU for two rows per notification; binding here is a call to
/// `sqlite3_bind_*` per value.
///
/// Values are stored exactly as GRDB stores them, so GRDB reads them back unchanged: integers and `Bool` as
/// `INTEGER` (1 or 0), `Double` as `REAL`, `String` as UTF-8 `TEXT` up to its first NUL, bytes as `BLOB`, `nil` as
/// `NULL`. The statement must come from `Database.cachedStatement(sql:)` inside the caller's transaction; every
/// parameter of every row is bound, in order, before ``step()``.
struct SQLiteRowWriter: ~Copyable {
    private let database: Database
    private let statement: Statement
    private let handle: OpaquePointer
    private var index: Int32 = 0

    init(_ statement: Statement, in database: Database) {
        self.database = database
        self.statement = statement
        self.handle = statement.sqliteStatement
        // Ready for binding even if GRDB ran the statement last and left it stepped.
        sqlite3_reset(handle)
    }

    mutating func bind(_ value: Int64) throws {
        index += 1
        try check(sqlite3_bind_int64(handle, index, value))
    }

    mutating func bind(_ value: Int?) throws {
        guard let value else { return try bindNull() }
        try bind(Int64(value))
    }

    mutating func bind(_ value: Bool?) throws {
        guard let value else { return try bindNull() }
        try bind(value ? 1 as Int64 : 0)
    }

    mutating func bind(_ value: Double) throws {
        index += 1
        try check(sqlite3_bind_double(handle, index, value))
    }

    mutating func bind(_ value: String?) throws {
        guard let value else { return try bindNull() }
        index += 1
        let position = index
        // Up to the first NUL, as GRDB binds a string (length -1); a native string's storage is NUL-terminated, so
        // this copies nothing before SQLite's own copy.
        let code = value.withCString { sqlite3_bind_text(handle, position, $0, -1, Self.transient) }
        try check(code)
    }

    mutating func bind(bytes value: [UInt8]) throws {
        index += 1
        let position = index
        let code = value.withUnsafeBytes { bytes in
            sqlite3_bind_blob(handle, position, bytes.baseAddress, Int32(bytes.count), Self.transient)
        }
        try check(code)
    }

    mutating func bindNull() throws {
        index += 1
        try check(sqlite3_bind_null(handle, index))
    }

    /// Runs the statement with the row bound so far, then readies it for the next row.
    mutating func step() throws {
        precondition(index == sqlite3_bind_parameter_count(handle), "every parameter of the row is bound")
        index = 0
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else { throw failure(code) }
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw failure(code) }
    }

    /// GRDB's error for `code`, with SQLite's message and the statement's SQL (never its arguments), taken before the
    /// statement is reset (after a failed step `sqlite3_reset` repeats the error, already in hand), so the cached
    /// statement is ready and holds no binding when next used.
    private func failure(_ code: Int32) -> DatabaseError {
        let message = sqlite3_errmsg(database.sqliteConnection).map { String(cString: $0) }
        let error = DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: statement.sql)
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        return error
    }

    /// `SQLITE_TRANSIENT`: SQLite copies the value before the bind call returns, so no Swift buffer has to outlive it.
    /// The C macro is `((sqlite3_destructor_type)-1)`, which Swift does not import.
    private static var transient: sqlite3_destructor_type {
        unsafeBitCast(-1 as Int, to: sqlite3_destructor_type.self)
    }
}
