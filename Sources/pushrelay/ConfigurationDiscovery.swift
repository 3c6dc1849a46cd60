import ArgumentParser
import Foundation
import RelayApplication

/// The `--config` help every command shows: one rule for all of them (``ConfigurationFile``).
enum ConfigurationHelp {
    static let option = ArgumentHelp(
        "The configuration file. Default: $PUSHRELAY_CONFIG, else ./relay.conf, else /etc/pushrelay/relay.conf, "
            + "else none (defaults and PUSHRELAY_* variables).",
        valueName: "file"
    )
}

/// Finds the configuration file by ``ConfigurationFile``'s rule.
func locateConfiguration(_ option: String?) -> ConfigurationFile {
    ConfigurationFile.locate(option: option, environment: ProcessInfo.processInfo.environment)
}

/// Finds and loads the configuration by ``ConfigurationFile``'s rule, or explains why it cannot be used.
func loadConfiguration(_ option: String?) throws -> RelayConfiguration {
    let file = locateConfiguration(option)
    do {
        return try RelayConfiguration.load(path: file.path, environment: ProcessInfo.processInfo.environment)
    } catch {
        throw CLIError("the configuration (\(file.summary)) is not usable:\n\(error)")
    }
}
