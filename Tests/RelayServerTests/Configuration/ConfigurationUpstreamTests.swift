import Foundation
import Testing

@testable import RelayApplication
@testable import RelayServer

/// `[upstream]`: the transport, the proxy, PINGs and connection ages.
@Suite struct ConfigurationUpstreamTests {
    @Test func theDefaultsAreNGHTTP2DirectWithPingsAndLongLivedConnections() throws {
        let upstream = try #require(parsedConfiguration("")).upstream
        #expect(upstream.transport == .nghttp2)
        #expect(upstream.proxy == nil)
        #expect(upstream.pingIntervalSeconds == 60)
        #expect(upstream.pingTimeoutSeconds == 10)
        #expect(upstream.maxConnectionAgeSeconds == 14_400)
        #expect(upstream.idleTimeoutSeconds == 3300)
        #expect(upstream == RelayConfiguration.Upstream())
    }

    @Test func everyKeyIsRead() throws {
        let toml = """
            [upstream]
            transport = "curl"
            proxy = "http://relay:s3cret@proxy.example:3128"
            ping_interval_seconds = 0
            ping_timeout_seconds = 3
            max_connection_age_seconds = 600
            idle_timeout_seconds = 90
            """
        let upstream = try #require(parsedConfiguration(toml)).upstream
        #expect(upstream.transport == .curl)
        let proxy = try #require(upstream.proxy)
        #expect(proxy.url.value == "http://relay:s3cret@proxy.example:3128")
        #expect(proxy.host == "proxy.example" && proxy.port == 3128 && proxy.hasCredentials)
        #expect(proxy.redacted == "http://***@proxy.example:3128")
        #expect(upstream.pingIntervalSeconds == 0)
        #expect(upstream.pingTimeoutSeconds == 3)
        #expect(upstream.maxConnectionAgeSeconds == 600)
        #expect(upstream.idleTimeoutSeconds == 90)
    }

    @Test func theEnvironmentOverridesEveryKey() throws {
        let toml = """
            [upstream]
            transport = "nghttp2"
            ping_interval_seconds = 30
            """
        let upstream = try #require(
            parsedConfiguration(
                toml,
                environment: [
                    "PUSHRELAY_UPSTREAM_TRANSPORT": "curl",
                    "PUSHRELAY_UPSTREAM_PROXY": "http://10.0.0.1:8080",
                    "PUSHRELAY_UPSTREAM_PING_INTERVAL_SECONDS": "120",
                    "PUSHRELAY_UPSTREAM_PING_TIMEOUT_SECONDS": "20",
                    "PUSHRELAY_UPSTREAM_MAX_CONNECTION_AGE_SECONDS": "7200",
                    "PUSHRELAY_UPSTREAM_IDLE_TIMEOUT_SECONDS": "60",
                ]
            )
        ).upstream
        #expect(upstream.transport == .curl)
        #expect(upstream.proxy?.url.value == "http://10.0.0.1:8080")
        #expect(upstream.proxy?.redacted == "http://10.0.0.1:8080")
        #expect(upstream.pingIntervalSeconds == 120)
        #expect(upstream.pingTimeoutSeconds == 20)
        #expect(upstream.maxConnectionAgeSeconds == 7200)
        #expect(upstream.idleTimeoutSeconds == 60)
    }

    @Test func retriesAfterATimeoutAreOneByDefaultAndSetInTheFileOrTheEnvironment() throws {
        #expect(try #require(parsedConfiguration("")).upstream.maxAttemptsAfterTimeout == 1)
        let toml = "[upstream]\nmax_attempts_after_timeout = 0"
        #expect(try #require(parsedConfiguration(toml)).upstream.maxAttemptsAfterTimeout == 0)
        let environment = ["PUSHRELAY_UPSTREAM_MAX_ATTEMPTS_AFTER_TIMEOUT": "3"]
        let overridden = try #require(parsedConfiguration(toml, environment: environment))
        #expect(overridden.upstream.maxAttemptsAfterTimeout == 3)
        #expect(
            configurationProblemKeys("", environment: ["PUSHRELAY_UPSTREAM_MAX_ATTEMPTS_AFTER_TIMEOUT": "-1"])
                == ["PUSHRELAY_UPSTREAM_MAX_ATTEMPTS_AFTER_TIMEOUT"])
    }

    @Test func aProxyChoosesCurlWhenNoTransportIsNamed() throws {
        let upstream = try #require(parsedConfiguration("[upstream]\nproxy = \"http://proxy.example:3128\"")).upstream
        #expect(upstream.transport == .curl)
        #expect(upstream.proxy?.hasCredentials == false)
        #expect(try #require(parsedConfiguration("[upstream]\ntransport = \"CURL\"")).upstream.transport == .curl)
    }

    @Test(arguments: [
        "http://[::1]:3128", "http://192.168.1.10:8080", "HTTP://proxy.example:3128/", "http://u@p.example:1",
    ])
    func validProxiesAreAccepted(url: String) throws {
        let proxy = try #require(parsedConfiguration("[upstream]\nproxy = \"\(url)\"")?.upstream.proxy)
        #expect(proxy.url.value == url)
        #expect(!proxy.redacted.contains("u@"))
    }

    @Test func nghttp2WithAProxyIsReportedNamingBothKeys() {
        let problems = configurationProblems(
            "[upstream]\ntransport = \"nghttp2\"\nproxy = \"http://proxy.example:3128\""
        )
        #expect(problems.map(\.key) == ["upstream.proxy"])
        #expect(problems.first?.message.contains("upstream.transport is \"nghttp2\"") == true, "\(problems)")

        let fromEnvironment = configurationProblems(
            "[upstream]\nproxy = \"http://proxy.example:3128\"",
            environment: ["PUSHRELAY_UPSTREAM_TRANSPORT": "nghttp2"]
        )
        #expect(fromEnvironment.map(\.key) == ["upstream.proxy"])
        #expect(fromEnvironment.first?.message.contains("PUSHRELAY_UPSTREAM_TRANSPORT") == true)
    }

    @Test(arguments: [
        ("[upstream]\ntransport = \"h2c\"", "upstream.transport", "expected one of \"nghttp2\", \"curl\""),
        ("[upstream]\ntransport = 2", "upstream.transport", "expected a string"),
        ("[upstream]\nproxy = \"https://proxy.example:3128\"", "upstream.proxy", "https proxies are not supported"),
        ("[upstream]\nproxy = \"socks5://proxy.example:1080\"", "upstream.proxy", "scheme \"socks5\""),
        ("[upstream]\nproxy = \"proxy.example:3128\"", "upstream.proxy", "expected an http://"),
        ("[upstream]\nproxy = \"http://proxy.example\"", "upstream.proxy", "no port"),
        ("[upstream]\nproxy = \"http://:3128\"", "upstream.proxy", "no host"),
        ("[upstream]\nproxy = \"http://bad_host!:3128\"", "upstream.proxy", "neither an IP address nor a host name"),
        ("[upstream]\nproxy = \"http://proxy.example:3128/path\"", "upstream.proxy", "path"),
        ("[upstream]\nproxy = \"http://proxy.example:3128?x=1\"", "upstream.proxy", "query"),
        ("[upstream]\nproxy = \"http://:secret@proxy.example:3128\"", "upstream.proxy", "no user name"),
        ("[upstream]\nping_interval_seconds = -1", "upstream.ping_interval_seconds", "between 0 and 86400, found -1"),
        ("[upstream]\nping_interval_seconds = 86401", "upstream.ping_interval_seconds", "between 0 and 86400"),
        ("[upstream]\nping_timeout_seconds = 0", "upstream.ping_timeout_seconds", "between 1 and 300, found 0"),
        ("[upstream]\nping_timeout_seconds = 301", "upstream.ping_timeout_seconds", "between 1 and 300"),
        ("[upstream]\nmax_connection_age_seconds = 59", "upstream.max_connection_age_seconds", "at least 60, found 59"),
        ("[upstream]\nidle_timeout_seconds = 0", "upstream.idle_timeout_seconds", "at least 1, found 0"),
    ])
    func aBadValueIsReportedUnderItsKey(toml: String, key: String, message: String) {
        let problems = configurationProblems(toml)
        #expect(problems.map(\.key) == [key], "\(problems)")
        #expect(problems.first?.message.contains(message) == true, "\(problems)")
    }

    @Test(arguments: [
        "[upstream]\nping_interval_seconds = 0", "[upstream]\nping_interval_seconds = 86400",
        "[upstream]\nping_timeout_seconds = 1", "[upstream]\nping_timeout_seconds = 300",
        "[upstream]\nmax_connection_age_seconds = 60", "[upstream]\nidle_timeout_seconds = 1",
    ])
    func boundaryValuesAreAccepted(toml: String) {
        #expect(configurationProblems(toml).isEmpty)
    }

    @Test(arguments: [
        ("PUSHRELAY_UPSTREAM_TRANSPORT", "quic"),
        ("PUSHRELAY_UPSTREAM_PROXY", "https://proxy.example:3128"),
        ("PUSHRELAY_UPSTREAM_PING_INTERVAL_SECONDS", "-5"),
        ("PUSHRELAY_UPSTREAM_PING_TIMEOUT_SECONDS", "0"),
        ("PUSHRELAY_UPSTREAM_MAX_CONNECTION_AGE_SECONDS", "10"),
        ("PUSHRELAY_UPSTREAM_IDLE_TIMEOUT_SECONDS", "soon"),
    ])
    func aBadEnvironmentValueIsReportedUnderItsVariable(variable: String, value: String) {
        #expect(configurationProblemKeys("", environment: [variable: value]) == [variable])
    }

    @Test(arguments: [
        "https://relay:hunter2@proxy.example:3128", "http://relay:hunter2@proxy.example",
        "http://relay:hunter2@proxy.example:3128/path", "ftp://relay:hunter2@proxy.example:21",
        "http://relay:hunter2@bad_host!:3128",
    ])
    func aProblemNeverQuotesTheProxyPassword(url: String) {
        let problems = configurationProblems("[upstream]\nproxy = \"\(url)\"")
        #expect(problems.map(\.key) == ["upstream.proxy"])
        #expect(!problems.contains { $0.description.contains("hunter2") }, "\(problems)")
    }

    @Test func theProxyPasswordNeverAppearsInDescriptionsOrTheSummary() throws {
        let configuration = try #require(
            parsedConfiguration("[upstream]\nproxy = \"http://relay:hunter2@proxy.example:3128\"")
        )
        var dumped = ""
        dump(configuration, to: &dumped)
        let summary = configuration.summary
        for text in [String(describing: configuration), String(reflecting: configuration), dumped, summary] {
            #expect(!text.contains("hunter2"))
        }
        #expect(summary.contains("; upstream over curl through proxy http://***@proxy.example:3128;"), "\(summary)")
        #expect(try #require(parsedConfiguration("")).summary.contains("; upstream over nghttp2;"))
    }
}
