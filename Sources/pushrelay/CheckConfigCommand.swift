import ArgumentParser
import Foundation
import RelayApplication
import RelayServer
import RelayStore
import RelayStorePostgres

/// `pushrelay check-config`: loads the configuration as `serve` would and reports every problem, without starting
/// anything.
///
/// Exits with status 0 and "configuration OK: …" when the configuration is valid; otherwise prints each problem on
/// its own line to standard error and exits with status 1. With `--json`, prints `{"ok":true}` or
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

    @Option(name: .long, help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config: String = "relay.conf"

    @Flag(name: .long, help: "Print the result as JSON on standard output.")
    var json = false

    func run() async throws {
        let problems: [ConfigurationError.Problem]
        let summary: String
        do throws(ConfigurationError) {
            let configuration = try RelayConfiguration.load(
                path: config,
                environment: ProcessInfo.processInfo.environment
            )
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
            summary = configuration.summary
        } catch {
            problems = error.problems
            summary = ""
        }

        if json {
            let report = Report(
                ok: problems.isEmpty,
                problems: problems.isEmpty ? nil : problems.map { Report.Problem(key: $0.key, message: $0.message) }
            )
            print(try Self.encode(report))
        } else if problems.isEmpty {
            print("configuration OK: \(summary)")
        } else {
            for problem in problems {
                FileHandle.standardError.write(Data("\(problem)\n".utf8))
            }
        }
        if !problems.isEmpty { throw ExitCode(1) }
    }

    /// The `--json` output.
    private struct Report: Encodable {
        struct Problem: Encodable {
            var key: String
            var message: String
        }

        var ok: Bool
        /// Left out when `ok` is true.
        var problems: [Problem]?
    }

    private static func encode(_ report: Report) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }
}
