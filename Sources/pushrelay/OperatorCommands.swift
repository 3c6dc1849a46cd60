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
            if let problem = TenantAdministration.operatorNameProblem(name) {
                throw ValidationError("NAME \(problem)")
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
            let console = try await AdminConsole.open(options)
            let role = try parsedRole()
            let created: TenantAdministration.CreatedOperator
            do throws(TenantAdministration.Failure) {
                created = try await console.administration.createOperator(name: name, role: role)
            } catch {
                throw CLIError(error.description)
            }
            if options.json {
                printJSON(AdminJSON.createdOperator(created))
            } else {
                let record = created.record
                print("Operator \(record.name) (\(record.role.rawValue), id \(record.id)):")
                print(created.token)
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
            let rows = operators.map { record in
                [
                    record.name, record.id, record.role.rawValue, record.createdAt.formatted(.iso8601),
                    record.revokedAt.map { "revoked \($0.formatted(.iso8601))" } ?? "active",
                ]
            }
            for line in TextTable.lines(["NAME", "ID", "ROLE", "CREATED", "STATE"], rows) { print(line) }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke an operator's token by the operator's name.")
        @Argument(help: "The operator's name.") var name: String
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let console = try await AdminConsole.open(options)
            let revoked: OperatorRecord
            do throws(TenantAdministration.Failure) {
                let administration = console.administration
                revoked = try await administration.revokeOperator(try await administration.operatorRecord(name))
            } catch {
                throw CLIError(error.description)
            }
            options.json ? printJSON(revoked.json) : print("Operator \(revoked.name) is revoked.")
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
