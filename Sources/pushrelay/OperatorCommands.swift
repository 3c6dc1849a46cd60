import ArgumentParser
import Foundation
import RelayApplication
import RelayCore
import RelayServer
import RelayStore

/// `pushrelay operator …`: the tokens of the admin API (`/admin/v1`), each with a role.
struct OperatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operator",
        abstract: "Create, list and revoke operator tokens for the admin API.",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an operator and print its token, once.",
            discussion: """
                admin: everything (tenants, keys, operators, usage, audit); auditor: read-only (tenants, keys without \
                secrets, usage and the audit log). The token is pro_<id>_<secret>; the store keeps only the id and the \
                SHA-256 of the secret, so it is shown once.
                """
        )
        @Argument(help: "A unique name; the audit log names the operator's actions operator:NAME.")
        var name: String
        @Option(help: ArgumentHelp("admin or auditor.", valueName: "role"))
        var role: String
        @OptionGroup var options: StoreOptions

        func validate() throws {
            guard !name.isEmpty, name.count <= 100,
                name.unicodeScalars.allSatisfy({ !$0.properties.isWhitespace && $0.value >= 0x20 && $0.value != 0x7F })
            else {
                throw ValidationError("NAME must be 1 to 100 characters without spaces")
            }
            _ = try parsedRole()
        }

        func parsedRole() throws -> OperatorRole {
            guard let parsed = OperatorRole(rawValue: role.lowercased()) else {
                throw ValidationError("--role must be admin or auditor, not '\(role)'")
            }
            return parsed
        }

        func run() async throws {
            let (_, store, audit) = try await openAdminStore(options)
            let issued = OperatorTokens.issue()
            var record = OperatorRecord(
                id: issued.id, name: name, role: try parsedRole(), secretHash: issued.secretHash)
            do {
                try await store.createOperator(record)
            } catch StoreError.duplicate {
                throw CLIError("an operator named '\(name)' already exists")
            }
            record = try await store.operatorRecord(id: record.id) ?? record
            // Recorded before the token is shown; should that fail, the token was never shown and can be revoked.
            try await audit.record(
                "operator.create",
                done: "operator \(name) was created (revoke it with pushrelay operator revoke \(name))",
                after: record.auditSnapshot
            )
            if options.json {
                printJSON(
                    .object([
                        "id": .string(record.id), "name": .string(record.name), "role": .string(record.role.rawValue),
                        "token": .string(issued.key),
                    ]))
            } else {
                print("Operator \(record.name) (\(record.role.rawValue), id \(record.id)):")
                print(issued.key)
                print("This is the only time the token is shown; the relay keeps only its hash.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List operators (never their tokens).")
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store) = try await openStore(options)
            let operators = try await store.operators()
            if options.json {
                printJSON(.array(operators.map(\.json)))
                return
            }
            print("NAME\tID\tROLE\tCREATED\tSTATE")
            for record in operators {
                let state = record.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active"
                print(
                    "\(record.name)\t\(record.id)\t\(record.role.rawValue)\t"
                        + "\(record.createdAt.formatted(.iso8601))\t\(state)"
                )
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an operator's token by the operator's name.")
        @Argument(help: "The operator's name.") var name: String
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store, audit) = try await openAdminStore(options)
            guard let before = try await store.operators().first(where: { $0.name == name }) else {
                throw CLIError("no operator named '\(name)'")
            }
            var record = before
            if record.revokedAt == nil {
                record.revokedAt = Date()
                try await store.updateOperator(record)
                record = try await store.operatorRecord(id: record.id) ?? record
            }
            try await audit.record(
                "operator.revoke", done: "operator \(name) was revoked", before: before.auditSnapshot,
                after: record.auditSnapshot
            )
            options.json ? printJSON(record.json) : print("Operator \(name) is revoked.")
        }
    }
}

extension OperatorRecord {
    /// The `--json` form: id, name, role and dates, never the token or its hash.
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id), "name": .string(name), "role": .string(role.rawValue),
            "createdAt": .string(createdAt.formatted(.iso8601)), "active": .bool(isActive),
        ]
        if let revokedAt { fields["revokedAt"] = .string(revokedAt.formatted(.iso8601)) }
        return .object(fields)
    }
}
