import Foundation
import RelayCore
import RelaySimulator
import Testing

@testable import RelayApplication
@testable import RelayServer

@Suite struct ConfigurationEnvironmentTests {
    @Test func aStringOverrideWinsOverTheFile() {
        let configuration = parsedConfiguration(
            "[server]\nlisten = \"0.0.0.0:8080\"",
            environment: ["PUSHRELAY_SERVER_LISTEN": "[::1]:9443"]
        )
        #expect(configuration?.server.listen == .init(host: "::1", port: 9443))
    }

    @Test func anIntegerOverrideIsParsed() {
        let configuration = parsedConfiguration(
            "[upstream]\nmax_attempts = 2",
            environment: ["PUSHRELAY_UPSTREAM_MAX_ATTEMPTS": " 7 "]
        )
        #expect(configuration?.upstream.maxAttempts == 7)
    }

    @Test func theCriticalLimitsAreOverridden() {
        let configuration = parsedConfiguration(
            "[limits]\ncritical_reserve_per_hour = 50\ncritical_per_device_per_minute = 5",
            environment: [
                "PUSHRELAY_LIMITS_CRITICAL_RESERVE_PER_HOUR": "0",
                "PUSHRELAY_LIMITS_CRITICAL_PER_DEVICE_PER_MINUTE": "20",
            ]
        )
        #expect(configuration?.limits.criticalReservePerHour == 0)
        #expect(configuration?.criticalPerDevicePerMinute == 20)
    }

    @Test func aNumberOverrideIsParsed() {
        let configuration = parsedConfiguration("", environment: ["PUSHRELAY_LIMITS_RATE_PER_SECOND": "2.5"])
        #expect(configuration?.limits.ratePerSecond == 2.5)
    }

    @Test func aListOverrideIsCommaSeparated() {
        let configuration = parsedConfiguration(
            "[server]\ntrusted_proxies = [\"172.16.0.0/12\"]",
            environment: ["PUSHRELAY_SERVER_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.0.0/16,,"]
        )
        #expect(configuration?.server.trustedProxies == ["10.0.0.0/8", "192.168.0.0/16"])
    }

    @Test(arguments: [
        ("true", true), ("FALSE", false), ("1", true), ("0", false), (" True ", true),
    ])
    func aBooleanOverrideIsParsed(text: String, value: Bool) {
        // No key is a boolean yet; the reading every future boolean key will use is checked directly.
        #expect(ConfigurationValue.reading(environment: text, as: .boolean) == .value(.boolean(value)))
    }

    @Test func aMalformedBooleanIsInvalid() {
        #expect(
            ConfigurationValue.reading(environment: "yes", as: .boolean) == .invalid("expected true, false, 1 or 0")
        )
    }

    @Test(arguments: [
        ("PUSHRELAY_UPSTREAM_MAX_ATTEMPTS", "three", "expected an integer"),
        ("PUSHRELAY_UPSTREAM_TIMEOUT_MS", "1.5", "expected an integer"),
        ("PUSHRELAY_LIMITS_RATE_PER_SECOND", "fast", "expected a number"),
        ("PUSHRELAY_LIMITS_RATE_PER_SECOND", "inf", "expected a number"),
    ])
    func anOverrideOfTheWrongTypeIsReportedUnderItsName(name: String, text: String, message: String) {
        #expect(configurationProblems("", environment: [name: text]) == [.init(key: name, message: message)])
    }

    @Test func anOverrideOutOfRangeIsReportedUnderItsName() {
        let problems = configurationProblems(
            "[upstream]\nmax_attempts = 3",
            environment: ["PUSHRELAY_UPSTREAM_MAX_ATTEMPTS": "12", "PUSHRELAY_SERVER_LISTEN": "0.0.0.0"]
        )
        #expect(problems.map(\.key) == ["PUSHRELAY_SERVER_LISTEN", "PUSHRELAY_UPSTREAM_MAX_ATTEMPTS"])
        #expect(problems.last?.message == "must be between 1 and 10, found 12")
    }

    @Test func anUnknownOverrideIsReportedWithASuggestion() {
        let problems = configurationProblems(
            "",
            environment: ["PUSHRELAY_APNS_KEYFILE": "/x.p8", "PUSHRELAY_NOTHING_LIKE_IT": "1"]
        )
        #expect(
            problems == [
                .init(
                    key: "PUSHRELAY_APNS_KEYFILE",
                    message: "no configuration key has this environment variable; did you mean PUSHRELAY_APNS_KEY_FILE?"
                ),
                .init(key: "PUSHRELAY_NOTHING_LIKE_IT", message: "no configuration key has this environment variable"),
            ]
        )
    }

    @Test func onlyPushRelayVariablesAreRead() {
        let environment = [
            "HOME": "/root", "PATH": "/usr/bin", "pushrelay_server_listen": "x", "RELAY_SERVER_LISTEN": "y",
        ]
        #expect(configurationProblems("", environment: environment).isEmpty)
    }

    @Test func anEmptyOverrideUnsetsTheFilesValue() {
        let configuration = parsedConfiguration(
            "[server]\nlisten = \"127.0.0.1:1234\"\n[apns]\nteam_id = \"ABCDE12345\"",
            environment: ["PUSHRELAY_SERVER_LISTEN": "", "PUSHRELAY_APNS_TEAM_ID": " "]
        )
        #expect(configuration?.server.listen == .init(host: "0.0.0.0", port: 8080))
        #expect(configuration?.apns == nil)
    }

    @Test func anOverrideReplacesAFileValueOfTheWrongTypeButTheFileIsStillReported() {
        let problems = configurationProblems(
            "[upstream]\nmax_attempts = \"3\"",
            environment: ["PUSHRELAY_UPSTREAM_MAX_ATTEMPTS": "3"]
        )
        #expect(problems.map(\.key) == ["upstream.max_attempts"])
    }

    @Test func crossKeyProblemsNameTheVariableThatSetTheValue() throws {
        let identity = try #require(ConfigurationFixtures.identity)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("relay.crt", identity.certificatePEM)
        let problems = configurationProblems(
            "",
            directory: folder.path,
            environment: ["PUSHRELAY_SERVER_TLS_CERT_FILE": "relay.crt"]
        )
        #expect(
            problems == [
                .init(
                    key: "server.tls_key_file",
                    message: "required when PUSHRELAY_SERVER_TLS_CERT_FILE is set: set both TLS files or neither"
                )
            ]
        )
    }

    @Test func everyKeyCanBeOverridden() throws {
        // A value of the right type for every key; each must be accepted as an override, not reported as unknown.
        for key in ConfigurationKey.all {
            let text: String
            switch key.kind {
            case .string: text = "x"
            case .integer: text = "1"
            case .number: text = "1.5"
            case .boolean: text = "true"
            case .stringList: text = "a,b"
            }
            let problems = configurationProblems("", environment: [key.environmentName: text])
            #expect(!problems.contains { $0.message.contains("no configuration key") }, "\(key.environmentName)")
        }
    }
}
