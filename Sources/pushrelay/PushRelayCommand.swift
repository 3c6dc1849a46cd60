import ArgumentParser
import RelayCore

@main
struct PushRelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushrelay",
        abstract: "PushRelay: a push relay gateway for self-hosted installs.",
        version: RelayVersion.current,
        subcommands: [
            ServeCommand.self, DemoCommand.self, SimulateCommand.self, CheckConfigCommand.self,
            TenantCommand.self, KeyCommand.self,
        ]
    )
}

/// `--config` and `--json`, shared by the commands that work on a relay's store.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: "The relay's configuration file.")
    var config: String = "relay.conf"

    @Flag(name: .long, help: "Print machine-readable JSON.")
    var json = false
}

/// A command's failure, printed as `Error: <message>` without the usage text.
struct CLIError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
