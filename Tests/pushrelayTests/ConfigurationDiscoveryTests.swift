import ArgumentParser
import Foundation
import RelayApplication
import RelayCore
import Testing

@testable import pushrelay

/// One rule finds the configuration for every command: `--config`, `PUSHRELAY_CONFIG`, `./relay.conf`,
/// `/etc/pushrelay/relay.conf`, none; and `check-config` says where each value came from.
@Suite struct ConfigurationDiscoveryTests {
    static let local = "/srv/relay/relay.conf"
    static let system = ConfigurationFile.systemPath

    static func locate(
        option: String? = nil, environment: [String: String] = [:], existing: Set<String>
    ) -> ConfigurationFile {
        ConfigurationFile.locate(
            option: option, environment: environment, workingDirectory: "/srv/relay",
            fileExists: { existing.contains($0) })
    }

    @Test func theRuleIsOptionThenVariableThenWorkingDirectoryThenSystem() {
        let both: Set = [Self.local, Self.system]
        #expect(
            Self.locate(option: "other.conf", environment: ["PUSHRELAY_CONFIG": "/x.conf"], existing: both)
                == ConfigurationFile(path: "other.conf", origin: .option))
        #expect(
            Self.locate(environment: ["PUSHRELAY_CONFIG": "/x.conf"], existing: both)
                == ConfigurationFile(path: "/x.conf", origin: .environment))
        #expect(
            Self.locate(environment: ["PUSHRELAY_CONFIG": " "], existing: both)
                == ConfigurationFile(path: Self.local, origin: .workingDirectory), "an empty variable is unset")
        #expect(Self.locate(existing: [Self.system]) == ConfigurationFile(path: Self.system, origin: .system))
        #expect(Self.locate(existing: []) == ConfigurationFile(path: nil, origin: .none))
    }

    /// Every command that takes `--config` parses it the same way, and none has a default of its own that would
    /// bypass the rule (the old `serve` read no file without `--config`, the others read ./relay.conf).
    @Test(arguments: [
        ["serve"], ["check-config"], ["healthcheck"], ["tenant", "list"], ["key", "list", "--tenant", "acme"],
        ["operator", "list"],
        ["usage", "acme"], ["audit", "verify"], ["audit", "query"], ["audit", "pubkey"],
    ])
    func everyCommandLeavesTheFileToTheRule(arguments: [String]) throws {
        let parsed = try PushRelayCommand.parseAsRoot(arguments)
        let mirror = Mirror(reflecting: parsed)
        let configs = Self.configValues(mirror)
        #expect(!configs.isEmpty, "\(arguments) has a --config option")
        #expect(configs.allSatisfy { $0 == nil }, "\(arguments) has no default of its own: \(configs)")
    }

    /// The `config` properties of a parsed command, looked for in its option groups too.
    static func configValues(_ mirror: Mirror) -> [String?] {
        var values: [String?] = []
        for child in mirror.children {
            if child.label == "_config", let option = child.value as? Option<String?> {
                values.append(option.wrappedValue)
            } else if child.label == "_options", let group = child.value as? OptionGroup<StoreOptions> {
                values.append(group.wrappedValue.config)
            }
        }
        return values
    }

    @Test func provenanceSaysFileEnvironmentOrDefaultAndRedactsSecrets() throws {
        let (_, provenance) = try RelayConfiguration.parseWithProvenance(
            toml: """
                [server]
                listen = "127.0.0.1:9090"
                [store]
                url = "sqlite://relay.db"
                """,
            directory: NSTemporaryDirectory(),
            environment: [
                "PUSHRELAY_STORE_URL": "sqlite://other.db",
                "PUSHRELAY_CONFIG": "/ignored.conf",
                "PUSHRELAY_EXPO_ACCESS_TOKEN": "expo-token-secret",
            ]
        ).self
        #expect(provenance.source(of: .serverListen) == .file)
        #expect(provenance.source(of: .storeURL) == .environment("PUSHRELAY_STORE_URL"))
        #expect(provenance.source(of: .limitsBurst) == .defaultValue)
        let store = try #require(provenance.entries.first { $0.key == .storeURL })
        #expect(store.value == "\"sqlite://other.db\"", "the environment's value, which wins over the file's")
        #expect(
            ConfigurationProvenance.redactingURLPassword("postgres://relay:s3cret@db:5432/relay?sslmode=disable")
                == "postgres://relay:***@db:5432/relay?sslmode=disable")
        #expect(ConfigurationProvenance.redactingURLPassword("postgres://db/relay") == "postgres://db/relay")
        let token = try #require(provenance.entries.first { $0.key == .expoAccessToken })
        #expect(token.value == "(secret)")
        let text = CheckConfigCommand.provenanceLines(provenance).joined(separator: "\n")
        #expect(!text.contains("expo-token-secret"))
        #expect(text.contains("environment PUSHRELAY_STORE_URL"))
        // Aligned: the FROM column starts at the same place on every row.
        let rows = Array(CheckConfigCommand.provenanceLines(provenance).dropLast())
        let header = try #require(rows.first)
        let offset = header.distance(from: header.startIndex, to: try #require(header.range(of: "FROM")).lowerBound)
        for row in rows.dropFirst() {
            let from = row.dropFirst(offset)
            #expect(from.hasPrefix("file") || from.hasPrefix("environment"), "\(row)")
        }
    }
}

@Suite struct CLIActorTests {
    @Test func theActorComesFromTheOptionThenTheVariableThenTheUser() {
        #expect(CLIAudit.actor(named: "alice", environment: ["PUSHRELAY_ACTOR": "bob"]) == "cli:alice")
        #expect(CLIAudit.actor(named: nil, environment: ["PUSHRELAY_ACTOR": "bob"]) == "cli:bob")
        #expect(CLIAudit.actor(named: " ", environment: [:]) == "cli:\(CLIAudit.userName)")
    }
}

@Suite struct CLIErrorTests {
    @Test func jsonErrorsAreJSONWithTheirStatus() throws {
        let text = PushRelayCommand.jsonError(message: "No tenant with the id or name 'x'.", status: 1, usage: false)
        let object = try #require(JSONValue.decode(Array(text.utf8))?.objectValue)
        #expect(object["ok"] == .bool(false))
        #expect(object["error"]?["message"] == .string("No tenant with the id or name 'x'."))
        #expect(object["error"]?["status"] == .int(1))
        #expect(object["error"]?["usage"] == .bool(false))
    }

    @Test func aTenantUpdateWithNothingToChangeIsAUsageError() {
        #expect(throws: (any Error).self) { try PushRelayCommand.parseAsRoot(["tenant", "update", "acme"]) }
        #expect((try? PushRelayCommand.parseAsRoot(["tenant", "update", "acme", "--burst", "5"])) != nil)
    }

    @Test func listsAreAlignedColumns() {
        let lines = TextTable.lines(["NAME", "ID"], [["a-long-name", "1"], ["b", "22"]])
        #expect(lines == ["NAME         ID", "a-long-name  1", "b            22"])
    }
}
