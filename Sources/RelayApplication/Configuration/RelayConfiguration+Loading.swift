internal import Foundation

extension RelayConfiguration {
    /// Reads a TOML configuration file, applies the `PUSHRELAY_<SECTION>_<KEY>` environment overrides, resolves
    /// relative paths against the file's folder, reads the secrets the file names, and validates everything.
    ///
    /// - Parameters:
    ///   - path: The configuration file, relative to the working directory or absolute; `nil` for no file, which
    ///     takes the defaults, the environment's overrides, and resolves relative paths against the working directory.
    ///   - environment: The process environment; only names starting with `PUSHRELAY_` are read.
    /// - Throws: ``ConfigurationError`` with every problem found.
    package static func load(path: String?, environment: [String: String]) throws(ConfigurationError) -> Self {
        try loadWithProvenance(path: path, environment: environment).configuration
    }

    /// ``load(path:environment:)``, and where each value came from (for `check-config`).
    package static func loadWithProvenance(
        path: String?,
        environment: [String: String]
    ) throws(ConfigurationError) -> (configuration: Self, provenance: ConfigurationProvenance) {
        let workingDirectory = FileManager.default.currentDirectoryPath
        guard let path else {
            return try decode(
                toml: "",
                documentName: "configuration",
                directory: workingDirectory,
                environment: environment
            )
        }
        let absolute = ConfigurationPath.resolve(path, against: workingDirectory)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory) else {
            throw ConfigurationError(problems: [
                .init(key: path, message: "configuration file \(absolute) does not exist")
            ])
        }
        guard !isDirectory.boolValue else {
            throw ConfigurationError(problems: [
                .init(key: path, message: "\(absolute) is a folder, not a configuration file")
            ])
        }
        guard let contents = FileManager.default.contents(atPath: absolute) else {
            throw ConfigurationError(problems: [
                .init(key: path, message: "configuration file \(absolute) cannot be read")
            ])
        }
        guard let text = String(data: contents, encoding: .utf8) else {
            throw ConfigurationError(problems: [
                .init(key: path, message: "configuration file \(absolute) is not UTF-8 text")
            ])
        }
        let directory = URL(fileURLWithPath: absolute).deletingLastPathComponent().path
        return try decode(toml: text, documentName: path, directory: directory, environment: environment)
    }

    /// Reads configuration text as ``load(path:environment:)`` reads a file's (for tests).
    ///
    /// - Parameters:
    ///   - toml: The TOML document.
    ///   - directory: The folder relative paths resolve against, as the file's folder would.
    ///   - environment: Overrides, as for ``load(path:environment:)``.
    /// - Throws: ``ConfigurationError`` with every problem found; a syntax error is filed under the key `toml`.
    package static func parse(
        toml: String,
        directory: String,
        environment: [String: String]
    ) throws(ConfigurationError) -> RelayConfiguration {
        try decode(toml: toml, documentName: "toml", directory: directory, environment: environment).configuration
    }

    /// ``parse(toml:directory:environment:)``, and where each value came from.
    package static func parseWithProvenance(
        toml: String,
        directory: String,
        environment: [String: String]
    ) throws(ConfigurationError) -> (configuration: RelayConfiguration, provenance: ConfigurationProvenance) {
        try decode(toml: toml, documentName: "toml", directory: directory, environment: environment)
    }

    private static func decode(
        toml: String,
        documentName: String,
        directory: String,
        environment: [String: String]
    ) throws(ConfigurationError) -> (configuration: RelayConfiguration, provenance: ConfigurationProvenance) {
        let source = ConfigurationSource(toml: toml, documentName: documentName, environment: environment)
        var reader = ConfigurationReader(source: source, directory: directory)
        let configuration = reader.configuration()
        let problems = source.problems + reader.problems
        guard problems.isEmpty else { throw ConfigurationError(problems: problems) }
        return (configuration, ConfigurationProvenance(source: source))
    }
}
