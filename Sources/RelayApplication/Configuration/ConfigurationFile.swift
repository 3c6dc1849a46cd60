import Foundation

/// Which configuration file a command reads: one rule for `serve`, `check-config`, `healthcheck`, `tenant`, `key`,
/// `operator`, `usage` and `audit`, so that no two commands run in the same folder can read different files.
///
/// In order: `--config FILE`; else the `PUSHRELAY_CONFIG` variable; else `relay.conf` in the working directory;
/// else `/etc/pushrelay/relay.conf`; else no file (the defaults and the `PUSHRELAY_*` overrides). A file named by
/// `--config` or `PUSHRELAY_CONFIG` must exist; the two usual places are only looked at.
package struct ConfigurationFile: Sendable, Equatable {
    /// How the file was found.
    package enum Origin: String, Sendable, Equatable {
        /// `--config`.
        case option
        /// `PUSHRELAY_CONFIG`.
        case environment
        /// `./relay.conf`.
        case workingDirectory
        /// `/etc/pushrelay/relay.conf`.
        case system
        /// No file: defaults and `PUSHRELAY_*` overrides only.
        case none

        /// `--config`, `PUSHRELAY_CONFIG`, …: how a person would name where the file came from.
        package var description: String {
            switch self {
            case .option: "--config"
            case .environment: ConfigurationFile.environmentVariable
            case .workingDirectory: "./\(ConfigurationFile.fileName) in the working directory"
            case .system: ConfigurationFile.systemPath
            case .none: "no file"
            }
        }
    }

    /// The variable that names the file when `--config` does not.
    package static let environmentVariable = "PUSHRELAY_CONFIG"
    /// The file looked for in the working directory.
    package static let fileName = "relay.conf"
    /// The last place looked at (the container image's own file lives there).
    package static let systemPath = "/etc/pushrelay/relay.conf"

    /// The file as given (relative to the working directory, or absolute); `nil` for no file.
    package var path: String?
    package var origin: Origin

    package init(path: String?, origin: Origin) {
        self.path = path
        self.origin = origin
    }

    /// Applies the rule.
    ///
    /// - Parameters:
    ///   - option: `--config`'s value, if given.
    ///   - environment: The process environment (`PUSHRELAY_CONFIG`; an empty value counts as unset).
    ///   - workingDirectory: Where `relay.conf` is looked for.
    ///   - fileExists: Whether a regular file exists at a path (tests pass their own).
    package static func locate(
        option: String?,
        environment: [String: String],
        workingDirectory: String = FileManager.default.currentDirectoryPath,
        fileExists: (String) -> Bool = Self.isFile
    ) -> ConfigurationFile {
        if let option, !option.isEmpty { return ConfigurationFile(path: option, origin: .option) }
        if let named = environment[environmentVariable]?.trimmingCharacters(in: .whitespaces), !named.isEmpty {
            return ConfigurationFile(path: named, origin: .environment)
        }
        let local = ConfigurationPath.resolve(fileName, against: workingDirectory)
        if fileExists(local) { return ConfigurationFile(path: local, origin: .workingDirectory) }
        if fileExists(systemPath) { return ConfigurationFile(path: systemPath, origin: .system) }
        return ConfigurationFile(path: nil, origin: .none)
    }

    /// Whether a regular file (not a folder) exists at `path`.
    package static func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// `relay.conf (--config)`, or `no configuration file`: for the start line and `check-config`.
    package var summary: String {
        guard let path else { return "no configuration file (defaults and PUSHRELAY_* variables)" }
        return "\(path) (\(origin.description))"
    }
}
