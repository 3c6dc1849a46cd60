import ArgumentParser
import Foundation
import RelayApplication
import RelayCore

@main
struct PushRelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushrelay",
        abstract: "PushRelay: a push relay gateway for self-hosted installs.",
        version: RelayVersion.current,
        subcommands: [
            ServeCommand.self, DemoCommand.self, SimulateCommand.self, CheckConfigCommand.self, HealthcheckCommand.self,
            TenantCommand.self, KeyCommand.self, OperatorCommand.self, UsageCommand.self, AuditCommand.self,
        ]
    )

    /// ArgumentParser's `main`, except that `audit verify` exits with status 2 on a usage error (its documented
    /// statuses are 0 intact, 1 altered, 2 usage or configuration error; ArgumentParser's own is 64), and that with
    /// `--json` an error is printed as JSON on standard output too (Docs/operators.md: exit statuses).
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let isVerify = arguments.prefix(2).elementsEqual(["audit", "verify"])
            let code = exitCode(for: error)
            // An ExitCode was thrown after the command printed its own result (check-config's problems, verify's
            // report); anything else has not been shown yet.
            if arguments.contains("--json"), !(error is ExitCode), code != .success {
                let status = isVerify ? 2 : code.rawValue
                print(jsonError(message: message(for: error), status: status, usage: code == .validationFailure))
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(Int32(status))
            }
            if isVerify, !(error is ExitCode), code != .success {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

extension PushRelayCommand {
    /// `{"ok":false,"error":{"message":…,"status":1,"usage":false}}`: a failure as `--json` prints it.
    static func jsonError(message: String, status: Int32, usage: Bool) -> String {
        JSONValue.object([
            "ok": .bool(false),
            "error": .object([
                "message": .string(message), "status": .int(Int64(status)), "usage": .bool(usage),
            ]),
        ]).encodedString()
    }
}

/// `--config` and `--json`, shared by the commands that work on a relay's store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ConfigurationHelp.option)
    var config: String?

    @Flag(name: .long, help: "Print machine-readable JSON.")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Who the audit log names for changes made by this command (default: $PUSHRELAY_ACTOR, else the Unix user).",
            valueName: "name"))
    var actor: String?
}

/// A command's failure, printed as `Error: <message>` without the usage text.
struct CLIError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
