import Foundation
import Logging
import PostgresNIO
import RelayStore

/// How ``PostgresStore`` talks to the server: single statements on any pooled connection, or a transaction on one.
extension PostgresStore {
    /// Runs one statement whose rows, if any, do not matter.
    func execute(_ query: PostgresQuery) async throws {
        try await Self.drain(client.query(query, logger: logger))
    }

    /// Runs one statement and returns its rows.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await client.query(query, logger: logger).collect()
    }

    /// Runs `body` in one transaction on one connection: committed when it returns, rolled back when it throws, and
    /// its error is rethrown as it was (postgres-nio's own `withTransaction` wraps it).
    func transaction<Result: Sendable>(
        _ body: (Transaction) async throws -> Result
    ) async throws -> Result {
        let logger = logger
        return try await client.withConnection { connection in
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
            try await PostgresStore.drain(connection.query(query, logger: logger))
        }

        func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
            try await connection.query(query, logger: logger).collect()
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

extension PSQLError {
    /// Whether the server refused the statement for `violation`, optionally of the constraint named `constraint`.
    func violates(_ violation: ConstraintViolation, constraint: String? = nil) -> Bool {
        guard code == .server, serverInfo?[.sqlState] == violation.rawValue else { return false }
        return constraint.map { serverInfo?[.constraintName] == $0 } ?? true
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
