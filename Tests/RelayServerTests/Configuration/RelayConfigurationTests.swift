import Foundation
import Logging
import RelayCore
import Testing

@testable import RelayApplication
@testable import RelayServer

@Suite struct RelayConfigurationTests {
    @Test func sampleConfigurationParsesToTheDefaults() throws {
        let path = ConfigurationFixtures.sampleConfigurationPath
        let configuration = try RelayConfiguration.load(path: path, environment: [:])
        #expect(configuration == RelayConfiguration.defaults(directory: ConfigurationFixtures.repositoryRoot))
        #expect(configuration.apns == nil)
        #expect(configuration.fcm == nil)
        #expect(configuration.expo.accessToken == nil)
    }

    @Test func defaultsAreTheDocumentedOnes() {
        let configuration = RelayConfiguration.defaults(directory: "/etc/pushrelay")
        #expect(configuration.server.listen == .init(host: "0.0.0.0", port: 8080))
        #expect(configuration.server.tlsCertFile == nil && configuration.server.tlsKeyFile == nil)
        #expect(configuration.server.trustedProxies.isEmpty)
        #expect(configuration.store.url == "sqlite://pushrelay.db")
        #expect(configuration.store.location == .sqlite(path: "/etc/pushrelay/pushrelay.db"))
        #expect(
            configuration.upstream
                == .init(caFile: nil, maxConnections: 2, maxConcurrentStreams: nil, timeoutMs: 10_000, maxAttempts: 3)
        )
        #expect(configuration.upstream.concurrentStreams(for: .apns) == 500)
        #expect(configuration.upstream.concurrentStreams(for: .fcm) == 100)
        #expect(configuration.upstream.concurrentStreams(for: .expo) == 100)
        #expect(configuration.expo.endpoint == "https://exp.host")
        #expect(configuration.expo.receiptDelaySeconds == 900)
        #expect(configuration.android.criticalChannelID == "oncall_critical")
        #expect(
            configuration.limits
                == RateLimits(
                    ratePerSecond: 10, burst: 100, dailyQuota: 100_000, perDevicePerMinute: 30,
                    criticalReservePerHour: 120)
        )
        #expect(configuration.criticalPerDevicePerMinute == 10)
        #expect(configuration.audit.retentionDays == 365)
        #expect(configuration.receipts.ttlHours == 72)
        #expect(configuration.receipts.requestDeadlineMs == 10_000)
        #expect(configuration.logging.format == .text)
        #expect(configuration.logging.level == .info)
    }

    @Test func anEmptyDocumentIsTheDefaults() throws {
        let configuration = try RelayConfiguration.parse(toml: "", directory: "/srv", environment: [:])
        #expect(configuration == .defaults(directory: "/srv"))
    }

    @Test func everyKeyIsSetInTheFile() throws {
        let toml = """
            [server]
            listen = "127.0.0.1:9090"
            trusted_proxies = ["10.0.0.0/8"]
            [store]
            url = "sqlite:///var/lib/pushrelay/relay.db"
            [upstream]
            max_connections = 4
            max_concurrent_streams = 500
            timeout_ms = 2500
            max_attempts = 5
            retry_window_seconds = 90
            [apns]
            environment = "sandbox"
            endpoint = "https://apns.example.com:8443/"
            sandbox_endpoint = "https://apns-sandbox.example.com"
            [fcm]
            endpoint = "https://fcm.example.com"
            [expo]
            access_token = "expo-token"
            endpoint = "https://expo.example.com"
            receipt_delay_seconds = 120
            [android]
            critical_channel_id = "pages"
            [limits]
            rate_per_second = 2.5
            burst = 20
            daily_quota = 5000
            per_device_per_minute = 6
            critical_reserve_per_hour = 0
            critical_per_device_per_minute = 3
            [audit]
            retention_days = 30
            [receipts]
            ttl_hours = 24
            wait_ms = 3000
            [logging]
            format = "json"
            level = "debug"
            """
        let configuration = try RelayConfiguration.parse(toml: toml, directory: "/srv", environment: [:])
        #expect(configuration.server.listen == .init(host: "127.0.0.1", port: 9090))
        #expect(configuration.server.trustedProxies == ["10.0.0.0/8"])
        #expect(configuration.store.location == .sqlite(path: "/var/lib/pushrelay/relay.db"))
        #expect(
            configuration.upstream
                == .init(
                    maxConnections: 4, maxConcurrentStreams: 500, timeoutMs: 2500, maxAttempts: 5,
                    retryWindowSeconds: 90)
        )
        #expect(configuration.upstream.concurrentStreams(for: .fcm) == 500)
        #expect(configuration.apns == nil, "no key_file, so APNs stays off")
        #expect(configuration.fcm == nil)
        #expect(
            configuration.expo
                == .init(
                    accessToken: .init("expo-token"), endpoint: "https://expo.example.com", receiptDelaySeconds: 120
                )
        )
        #expect(configuration.android.criticalChannelID == "pages")
        #expect(
            configuration.limits
                == RateLimits(
                    ratePerSecond: 2.5, burst: 20, dailyQuota: 5000, perDevicePerMinute: 6, criticalReservePerHour: 0)
        )
        #expect(configuration.criticalPerDevicePerMinute == 3)
        #expect(configuration.audit.retentionDays == 30)
        #expect(configuration.receipts == .init(ttlHours: 24, requestDeadlineMs: 3000))
        #expect(configuration.logging == .init(format: .json, level: .debug))
    }

    @Test func severalProblemsAreReportedTogether() {
        let toml = """
            [server]
            listen = "0.0.0.0:70000"
            [upstream]
            max_attempts = 0
            timeout_ms = "fast"
            [limits]
            burst = 0
            [logging]
            level = "loud"
            [extra]
            """
        let problems = configurationProblems(toml, environment: ["PUSHRELAY_AUDIT_RETENTION_DAYS": "-1"])
        #expect(
            problems.map(\.key) == [
                "extra", "upstream.timeout_ms", "server.listen", "upstream.max_attempts", "limits.burst",
                "PUSHRELAY_AUDIT_RETENTION_DAYS", "logging.level",
            ]
        )
        let error = ConfigurationError(problems: problems)
        #expect(error.description.split(separator: "\n").count == problems.count)
        #expect(error.description.contains("upstream.max_attempts: must be between 1 and 10, found 0"))
    }

    @Test func aSyntaxErrorNamesTheLine() {
        let problems = configurationProblems("[server]\nlisten = \n")
        #expect(problems.map(\.key) == ["toml"])
        #expect(problems.first?.message.contains("line 2") == true)
    }

    @Test func loadingReportsAMissingFile() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = folder.file("missing.conf")
        let error = #expect(throws: ConfigurationError.self) {
            try RelayConfiguration.load(path: path, environment: [:])
        }
        #expect(error?.problems == [.init(key: path, message: "configuration file \(path) does not exist")])
    }

    @Test func loadingASyntaxErrorNamesTheFile() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = try folder.write("relay.conf", "[server\n")
        let error = #expect(throws: ConfigurationError.self) {
            try RelayConfiguration.load(path: path, environment: [:])
        }
        #expect(error?.problems.map(\.key) == [path])
    }

    @Test func loadingWithoutAFileUsesTheDefaultsAndTheEnvironment() throws {
        let configuration = try RelayConfiguration.load(
            path: nil,
            environment: ["PUSHRELAY_UPSTREAM_MAX_ATTEMPTS": "4", "HOME": "/root"]
        )
        var expected = RelayConfiguration.defaults(directory: FileManager.default.currentDirectoryPath)
        expected.upstream.maxAttempts = 4
        #expect(configuration == expected)
    }

    @Test func theSummaryNamesProvidersButNoSecrets() throws {
        let configuration = try RelayConfiguration.parse(
            toml:
                "[expo]\naccess_token = \"summary-secret\"\n[store]\nurl = \"postgres://relay:hunter2@db:5432/relay\"\n"
                + ConfigurationFixtures.journalKeyLine,
            directory: "/srv",
            environment: [:]
        )
        let summary = configuration.summary
        #expect(summary.contains("Expo (with access token; receipts checked 900 s after sending)"))
        #expect(summary.contains("listening on 0.0.0.0:8080 over HTTP"))
        #expect(summary.contains("postgres db:5432/relay"))
        #expect(!summary.contains("summary-secret"))
        #expect(!summary.contains("hunter2"))
    }

    @Test func theErrorDescriptionIsOneLinePerProblem() {
        let error = ConfigurationError(problems: [
            .init(key: "apns.key_file", message: "file /x/y.p8 does not exist"),
            .init(key: "PUSHRELAY_UPSTREAM_MAX_ATTEMPTS", message: "expected an integer"),
        ])
        #expect(
            error.description
                == "apns.key_file: file /x/y.p8 does not exist\nPUSHRELAY_UPSTREAM_MAX_ATTEMPTS: expected an integer"
        )
    }
}

/// The key list, the documentation and the sample must agree.
@Suite struct ConfigurationDocumentationTests {
    private static func read(_ relativePath: String) throws -> String {
        let url = URL(fileURLWithPath: ConfigurationFixtures.repositoryRoot).appendingPathComponent(relativePath)
        return try String(contentsOf: url, encoding: .utf8)
    }

    @Test func everyKeyIsDocumentedWithItsEnvironmentVariable() throws {
        let documentation = try Self.read("Docs/configuration.md")
        for section in ConfigurationKey.sections {
            #expect(documentation.contains("## `[\(section)]`"), "section [\(section)]")
        }
        for key in ConfigurationKey.all {
            #expect(documentation.contains("| `\(key.name)` |"), "key \(key.path)")
            #expect(documentation.contains("`\(key.environmentName)`"), "variable \(key.environmentName)")
        }
    }

    @Test func everyKeyAppearsInTheSample() throws {
        let sample = try Self.read("relay.conf")
        for section in ConfigurationKey.sections {
            #expect(sample.contains("\n[\(section)]\n"), "section [\(section)]")
        }
        for key in ConfigurationKey.all {
            #expect(sample.contains("\(key.name) = "), "key \(key.path)")
        }
    }

    @Test func environmentNamesAreUniqueAndUpperCase() {
        let names = ConfigurationKey.all.map(\.environmentName)
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy { $0 == $0.uppercased() && $0.hasPrefix("PUSHRELAY_") })
        #expect(ConfigurationKey.byPath["apns.key_file"]?.environmentName == "PUSHRELAY_APNS_KEY_FILE")
    }
}
