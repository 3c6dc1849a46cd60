import ArgumentParser
import RelayCore

@main
struct PushRelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushrelay",
        abstract: "PushRelay: a push relay gateway for self-hosted installs.",
        version: RelayVersion.current
    )
}
