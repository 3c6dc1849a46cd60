import ArgumentParser
import Foundation
import RelayApplication
import RelayServer
import RelayStore
import RelayStorePostgres

/// `pushrelay check-config`: loads the configuration as `serve` would and reports every problem, without starting
/// anything.
///
/// Exits with status 0 and "configuration OK: …" when the configuration is valid, followed by the file it read and,
/// for every key the file or the environment sets, its value and where it came from (aligned columns); otherwise
/// prints each problem on its own line to standard error and exits with status 1. With `--json`, prints
/// `{"ok":true,"file":…,"settings":[{"key","source","value","variable"}]}` or
/// `{"ok":false,"problems":[{"key":…,"message":…}]}` to standard output instead, for scripts and CI.
struct CheckConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check a configuration file and the PUSHRELAY_* environment overrides.",
        discussion: """
            Reads the file, applies PUSHRELAY_<SECTION>_<KEY> overrides from the environment, checks every value and \
            the files it names (TLS files, the APNs key, the FCM service account, the Expo access token file), and \
            reports every problem found. Exits with status 1 when there is any.
            """
    )

    @Option(name: .long, help: ConfigurationHelp.option)
    var config: String?

    @Flag(name: .long, help: "Print the result as JSON on standard output.")
    var json = false

    func run() async throws {
        let file = locateConfiguration(config)
        var problems: [ConfigurationError.Problem]
        let summary: String
        var provenance: ConfigurationProvenance?
        do throws(ConfigurationError) {
            let loaded = try RelayConfiguration.loadWithProvenance(
                path: file.path,
                environment: ProcessInfo.processInfo.environment
            )
            let configuration = loaded.configuration
            provenance = loaded.provenance
            // The PostgreSQL URL's own parameters (sslmode, pool size, schema …) are checked the way `serve` reads
            // them.
            if case .postgres(let url)? = configuration.store.location {
                do throws(StoreError) {
                    _ = try PostgresStoreConfiguration(url: url)
                    problems = []
                } catch {
                    // Its messages never quote the URL (it may hold a password).
                    let message =
                        switch error {
                        case .unavailable(let text), .duplicate(let text), .notFound(let text): text
                        case .receiptsAlreadyFinal: "the store refused a write"
                        }
                    problems = [ConfigurationError.Problem(key: ConfigurationKey.storeURL.path, message: message)]
                }
            } else {
                problems = []
            }
            if let folder = configuration.store.folderProblem {
                problems.append(ConfigurationError.Problem(key: ConfigurationKey.storeURL.path, message: folder))
            }
            summary = configuration.summary
        } catch {
            problems = error.problems
            summary = ""
        }

        if json {
            let report = Report(
                ok: problems.isEmpty,
                file: file.path,
                fileFoundBy: file.origin.rawValue,
                problems: problems.isEmpty ? nil : problems.map { Report.Problem(key: $0.key, message: $0.message) },
                settings: problems.isEmpty ? provenance?.entries.map(Report.Setting.init) : nil
            )
            print(try Self.encode(report))
        } else if problems.isEmpty {
            print("configuration OK: \(summary)")
            print("configuration file: \(file.summary)")
            if let provenance { for line in Self.provenanceLines(provenance) { print(line) } }
        } else {
            FileHandle.standardError.write(Data("configuration file: \(file.summary)\n".utf8))
            for problem in problems {
                FileHandle.standardError.write(Data("\(problem)\n".utf8))
            }
        }
        if !problems.isEmpty { throw ExitCode(1) }
    }

    /// `  store.url   "postgres://relay:***@db/relay"   environment PUSHRELAY_STORE_URL`: each key the file or the
    /// environment sets, in aligned columns, then how many take their defaults.
    static func provenanceLines(_ provenance: ConfigurationProvenance) -> [String] {
        let rows = provenance.explicit.map { entry -> [String] in
            let source =
                switch entry.source {
                case .file: "file"
                case .environment(let variable): "environment \(variable)"
                case .defaultValue: "default"
                }
            return [entry.key.path, entry.value ?? "", source]
        }
        var lines = TextTable.lines(["KEY", "VALUE", "FROM"], rows).map { "  " + $0 }
        let defaults = provenance.entries.count - provenance.explicit.count
        lines.append("  (\(defaults) other keys take their defaults: Docs/configuration.md)")
        return lines
    }

    /// The `--json` output.
    private struct Report: Encodable {
        struct Problem: Encodable {
            var key: String
            var message: String
        }

        struct Setting: Encodable {
            var key: String
            /// `file`, `environment` or `default`.
            var source: String
            /// The variable, for `environment`.
            var variable: String?
            /// Left out for a default; secrets redacted.
            var value: String?

            init(_ entry: ConfigurationProvenance.Entry) {
                key = entry.key.path
                source = entry.source.name
                if case .environment(let name) = entry.source { variable = name }
                value = entry.value
            }
        }

        var ok: Bool
        /// The file read; left out when there is none.
        var file: String?
        /// `option`, `environment`, `workingDirectory`, `system` or `none`.
        var fileFoundBy: String
        /// Left out when `ok` is true.
        var problems: [Problem]?
        /// Every key with its source; left out when `ok` is false.
        var settings: [Setting]?
    }

    private static func encode(_ report: Report) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }
}
