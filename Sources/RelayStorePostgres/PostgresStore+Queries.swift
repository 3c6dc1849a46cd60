import Foundation
import Logging
import PostgresNIO
import RelayStore

/// How ``PostgresStore`` talks to the server: single statements on any pooled connection, or a transaction on one.
extension PostgresStore {
    /// Runs one statement whose rows, if any, do not matter.
    func execute(_ query: PostgresQuery) async throws {
        try await PostgresStoreError.described { try await Self.drain(client.query(query, logger: logger)) }
    }

    /// Runs one statement and returns its rows.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await PostgresStoreError.described { try await client.query(query, logger: logger).collect() }
    }

    /// Runs `body` in one transaction on one connection: committed when it returns, rolled back when it throws, and
    /// its error is rethrown as it was (postgres-nio's own `withTransaction` wraps it).
    func transaction<Result: Sendable>(
        _ body: (Transaction) async throws -> Result
    ) async throws -> Result {
        let logger = logger
        return try await PostgresStoreError.described {
            try await withConnection(logger: logger, body)
        }
    }

    private func withConnection<Result: Sendable>(
        logger: Logger, _ body: (Transaction) async throws -> Result
    ) async throws -> Result {
        try await client.withConnection { connection in
            let transaction = Transaction(connection: connection, logger: logger)
            try await transaction.execute("BEGIN")
            let result: Result
            do {
                result = try await body(transaction)
            } catch {
                // A broken connection fails the rollback too; the server then rolls back on its own.
                try? await transaction.execute("ROLLBACK")
                throw error
            }
            try await transaction.execute("COMMIT")
            return result
        }
    }

    /// `items` with one per key, the last given, in the place of the first: PostgreSQL refuses to upsert one row
    /// twice in a statement, and a batch's later write of a row is the one that stands.
    static func lastPerKey<Item>(_ items: [Item], key: (Item) -> String) -> [Item] {
        var position: [String: Int] = [:]
        var unique: [Item] = []
        unique.reserveCapacity(items.count)
        for item in items {
            if let index = position[key(item)] {
                unique[index] = item
            } else {
                position[key(item)] = unique.count
                unique.append(item)
            }
        }
        return unique
    }

    /// Reads a statement's rows to the end: the connection goes back to the pool only then.
    static func drain(_ rows: PostgresRowSequence) async throws {
        for try await _ in rows {}
    }

    /// One connection inside ``PostgresStore/transaction(_:)``. Not `Sendable`: it must not leave the closure.
    struct Transaction {
        let connection: PostgresConnection
        let logger: Logger

        func execute(_ query: PostgresQuery) async throws {
            try await PostgresStoreError.described {
                try await PostgresStore.drain(connection.query(query, logger: logger))
            }
        }

        func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
            try await PostgresStoreError.described { try await connection.query(query, logger: logger).collect() }
        }
    }
}

@available(*, unavailable)
extension PostgresStore.Transaction: Sendable {}

/// SQLSTATE classes the store turns into ``StoreError``s.
enum ConstraintViolation: String {
    case unique = "23505"
    case foreignKey = "23503"
}

/// A PostgreSQL error as the store reports it: what the server said (SQLSTATE, its message, the constraint and table)
/// or why the connection failed. postgres-nio's own description of an error is a generic sentence ("to prevent
/// accidental leakage of sensitive data"), which left operators guessing (issue 39); its debug description holds the
/// statement and the server's `detail`, which may echo the values bound. This holds neither: the server's message
/// names the constraint or the problem, not the row.
package struct PostgresStoreError: Error, CustomStringConvertible {
    let underlying: PSQLError

    package var description: String {
        var parts: [String] = []
        if let info = underlying.serverInfo {
            if let state = info[.sqlState] { parts.append("SQLSTATE \(state)") }
            if let message = info[.message] { parts.append(message) }
            if let constraint = info[.constraintName] { parts.append("constraint \(constraint)") }
            if let table = info[.tableName] { parts.append("table \(table)") }
        }
        if let cause = underlying.underlying { parts.append("\(cause)") }
        return "PostgreSQL error (\(underlying.code))" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
    }

    /// Whether the server refused the statement for `violation`, optionally of the constraint named `constraint`.
    func violates(_ violation: ConstraintViolation, constraint: String? = nil) -> Bool {
        let info = underlying.serverInfo
        guard underlying.code == .server, info?[.sqlState] == violation.rawValue else { return false }
        return constraint.map { info?[.constraintName] == $0 } ?? true
    }

    /// Runs `body`, reporting a postgres-nio error as a ``PostgresStoreError``.
    static func described<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as PSQLError {
            throw PostgresStoreError(underlying: error)
        }
    }
}

extension PostgresQuery {
    /// A statement assembled from trusted SQL text (column lists, `$n` placeholders) and bound values: the values
    /// travel as parameters, never as text.
    static func assembled(_ sql: String, binds: PostgresBindings) -> PostgresQuery {
        PostgresQuery(unsafeSQL: sql, binds: binds)
    }
}

extension PostgresBindings {
    /// `($first, $first+1, …)` for one row of `count` parameters, each cast to its `types` entry when given.
    static func placeholders(from first: Int, count: Int, types: [String]? = nil) -> String {
        let items = (0..<count).map { offset in
            let cast = types.map { "::\($0[offset])" } ?? ""
            return "$\(first + offset)\(cast)"
        }
        return "(" + items.joined(separator: ", ") + ")"
    }
}
