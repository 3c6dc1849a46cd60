import Foundation
import RelaySimulator
import Testing

@testable import RelayApplication
@testable import RelayServer

/// A fresh folder under the system's temporary directory, for configuration files and the files they name.
struct ConfigurationFolder {
    let path: String

    init() throws {
        path =
            URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
            .appendingPathComponent("pushrelay-config-\(UUID().uuidString)", isDirectory: true)
            .standardizedFileURL.path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Writes `contents` at `relativePath` (folders created as needed) and returns the absolute path.
    @discardableResult
    func write(_ relativePath: String, _ contents: String) throws -> String {
        let url = URL(fileURLWithPath: path, isDirectory: true).appendingPathComponent(relativePath)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try Data(contents.utf8).write(to: url)
        return url.standardizedFileURL.path
    }

    /// The absolute path of `relativePath` inside the folder.
    func file(_ relativePath: String) -> String {
        URL(fileURLWithPath: path, isDirectory: true).appendingPathComponent(relativePath).standardizedFileURL.path
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Credentials made once per test run: generating keys is the slow part.
enum ConfigurationFixtures {
    /// A delivery journal key file (32 random bytes, base64), written once per test run: what a configuration with
    /// a PostgreSQL store must name.
    static let journalKeyFile: String = {
        let folder = try? ConfigurationFolder()
        let key = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
        return (try? folder?.write("journal.key", Data(key).base64EncodedString() + "\n")) ?? "/missing-journal.key"
    }()

    /// `journal_key_file = "<journalKeyFile>"`, for a `[store]` section.
    static var journalKeyLine: String { "journal_key_file = \"\(journalKeyFile)\"" }

    /// A real APNs P-256 key (written by swift-crypto as Apple's `.p8` PEM) and a real service-account key.
    static let credentials: SimulatorCredentials? = try? SimulatorCredentials()
    /// A self-signed certificate and its key, for `tls_cert_file`, `tls_key_file` and `ca_file`.
    static let identity: HTTP2TestIdentity? = try? HTTP2TestIdentity.generate()

    /// A fake but well-formed Firebase service-account file; the private key is a sentinel, not a key.
    static func serviceAccountJSON(
        privateKey: String =
            "-----BEGIN PRIVATE KEY-----\nMIIEfake-service-account-secret\n-----END PRIVATE KEY-----\n",
        omitting omitted: Set<String> = [],
        type: String = "service_account"
    ) throws -> String {
        var object: [String: String] = [
            "type": type,
            "project_id": "demo-project",
            "private_key_id": "0123456789abcdef",
            "private_key": privateKey,
            "client_email": "relay@demo-project.iam.gserviceaccount.com",
            "token_uri": "https://oauth2.googleapis.com/token",
        ]
        for key in omitted { object[key] = nil }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// The repository's sample `relay.conf`, found from this file's location.
    static var sampleConfigurationPath: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Configuration
            .deletingLastPathComponent()  // RelayServerTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("relay.conf").path
    }

    static var repositoryRoot: String {
        URL(fileURLWithPath: sampleConfigurationPath).deletingLastPathComponent().path
    }
}

/// Parses `toml` and returns the problems (empty when it is valid).
func configurationProblems(
    _ toml: String,
    directory: String = "/nonexistent-pushrelay-config",
    environment: [String: String] = [:]
) -> [ConfigurationError.Problem] {
    do throws(ConfigurationError) {
        _ = try RelayConfiguration.parse(toml: toml, directory: directory, environment: environment)
        return []
    } catch {
        return error.problems
    }
}

/// The keys of the problems `toml` has.
func configurationProblemKeys(
    _ toml: String,
    directory: String = "/nonexistent-pushrelay-config",
    environment: [String: String] = [:]
) -> [String] {
    configurationProblems(toml, directory: directory, environment: environment).map(\.key)
}

/// Parses `toml`, recording the problems as an issue if there are any.
func parsedConfiguration(
    _ toml: String,
    directory: String = "/nonexistent-pushrelay-config",
    environment: [String: String] = [:],
    sourceLocation: SourceLocation = #_sourceLocation
) -> RelayConfiguration? {
    do throws(ConfigurationError) {
        return try RelayConfiguration.parse(toml: toml, directory: directory, environment: environment)
    } catch {
        Issue.record("unexpected problems:\n\(error)", sourceLocation: sourceLocation)
        return nil
    }
}
