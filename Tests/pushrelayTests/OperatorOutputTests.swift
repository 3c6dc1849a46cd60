import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTesting
import Logging
import RelayApplication
import RelayServer
import RelaySimulator
import Synchronization
import Testing

@testable import pushrelay

/// What operators read: JSON log lines with typed values, `/metrics` families against Docs/api.md, the health check.
@Suite(.timeLimit(.minutes(1)))
struct OperatorOutputTests {
    final class Lines: Sendable {
        let lines = Mutex<[Data]>([])
        func append(_ data: Data) { lines.withLock { $0.append(data) } }
        var objects: [[String: Any]] {
            lines.withLock { $0 }.compactMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        }
    }

    @Test func jsonLogsKeepNumbersAndBooleansAndStampUTCMilliseconds() throws {
        let lines = Lines()
        var handler = JSONLogHandler(label: "pushrelay")
        handler.write = { lines.append($0) }
        handler.now = { Date(timeIntervalSince1970: 1_800_000_000.123_9) }
        let logger = Logger(label: "pushrelay", factory: { _ in handler })
        logger.info(
            "Request",
            metadata: [
                "http.status": .stringConvertible(200), "http.duration_ms": .stringConvertible(1.25),
                "server.tls": .stringConvertible(true), "http.route": .string("/v1/push"),
                "relay.providers": .array([.string("apns"), .string("expo")]),
            ])
        let object = try #require(lines.objects.first)
        #expect(object["http.status"] as? Int == 200)
        #expect(object["http.duration_ms"] as? Double == 1.25)
        #expect(object["server.tls"] as? Bool == true)
        #expect(object["http.route"] as? String == "/v1/push")
        #expect(object["relay.providers"] as? [String] == ["apns", "expo"])
        #expect(object["time"] as? String == "2027-01-15T08:00:00.123Z")
        let raw = String(decoding: try #require(lines.lines.withLock { $0.first }), as: UTF8.self)
        #expect(raw.contains(#""http.status":200"#), "a number, not \"200\"")
    }

    /// A text stream that keeps what is written, for the text handler's lines.
    final class TextLines: TextOutputStream, Sendable {
        let text = Mutex("")
        func write(_ string: String) { text.withLock { $0 += string } }
    }

    /// The text handler keeps the logger's metadata itself and renders it with each line: set, removed and replaced
    /// keys show as they stand when the line is written, with the line's own metadata.
    @Test func textLogsShowTheLoggersMetadataAsItStandsWithTheLinesOwn() {
        let lines = TextLines()
        let handler = TextLogHandler(StreamLogHandler(label: "pushrelay", stream: lines, metadataProvider: nil))
        var logger = Logger(label: "pushrelay", factory: { _ in handler })
        logger[metadataKey: "hb.request.id"] = "hb-1"
        logger[metadataKey: "hb.request.id"] = nil
        logger[metadataKey: "relay.request.id"] = "r-1"
        logger.info("Request", metadata: ["http.status": "200"], source: "relay")
        logger.debug("Not shown")
        logger[metadataKey: "relay.request.id"] = "r-2"
        logger.info("Again", source: "relay")
        let written = lines.text.withLock { $0 }.split(separator: "\n").map(String.init)
        #expect(written.count == 2, "\(written)")
        #expect(
            written.first?.hasSuffix(" info pushrelay: http.status=200 relay.request.id=r-1 [relay] Request") == true)
        #expect(written.last?.hasSuffix(" info pushrelay: relay.request.id=r-2 [relay] Again") == true)
        #expect(!written.joined().contains("hb-1"))
    }

    /// `serve`'s start line names every app with what it sends through, the default app first.
    @Test func theStartLineNamesEveryApp() {
        var configuration = RelayConfiguration.defaults(directory: "/srv")
        configuration.apps["beta"] = RelayConfiguration.App(
            fcm: RelayConfiguration.FCM(
                serviceAccountFile: "/srv/beta.json", projectID: "beta-project", clientEmail: "relay@beta.example",
                privateKeyID: nil, privateKey: RelayConfiguration.Secret("not a key"), tokenURI: "https://t.example")
        )
        let metadata = ServeCommand.startMetadata(
            configuration, file: ConfigurationFile(path: nil, origin: .none), port: 8080, tls: false)
        #expect(
            metadata["relay.apps"] == .array([.string("default: Expo"), .string("beta: FCM (project beta-project)")]))
        #expect(!"\(metadata)".contains("not a key"), "never a secret")
    }

    /// Every family the catalogue knows is in Docs/api.md's metrics table with its labels, and every family
    /// in the exposition has a `# HELP` line from the catalogue.
    @Test func apiMdListsEveryMetricFamilyWithItsLabels() throws {
        let api = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Docs/api.md"),
            encoding: .utf8)
        for family in MetricCatalogue.families {
            let labels = family.labels.isEmpty ? "" : "{" + family.labels.joined(separator: ",") + "}"
            #expect(api.contains("| `\(family.name)\(labels)` | \(family.type) |"), "\(family.name) in api.md")
        }
        let documented = api.split(separator: "\n").filter { $0.hasPrefix("| `relay_") || $0.hasPrefix("| `process_") }
        #expect(documented.count == MetricCatalogue.families.count, "no family in api.md that the relay lacks")
    }

    @Test func helpLinesAreAddedBeforeEachKnownFamily() {
        let text = """
            # TYPE relay_queue_full_total counter
            relay_queue_full_total 3
            # HELP process_open_fds Open file descriptors of the process.
            # TYPE process_open_fds gauge
            process_open_fds 12
            """
        let lines = MetricCatalogue.addingHelp(to: text).split(separator: "\n")
        #expect(lines.first == "# HELP relay_queue_full_total \(MetricCatalogue.help("relay_queue_full_total"))")
        #expect(lines.filter { $0.hasPrefix("# HELP process_open_fds") }.count == 1, "an existing HELP is kept alone")
    }

    @Test func processMetricsAreReadFromProc() throws {
        let sample = try #require(ProcessMetrics.sample())
        #expect(sample.residentBytes > 0)
        #expect(sample.openFDs > 0)
        #expect(sample.cpuSeconds >= 0)
        let start = try #require(sample.startTime)
        #expect(start > 1_600_000_000 && start <= Date().timeIntervalSince1970 + 1)
        #expect(
            ProcessMetrics.parseStat("42 (a b) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22")?.utime
                == 11,
            "the command name may hold spaces")
    }

    @Test func healthcheckAsksTheConfiguredAddressAndReportsTheStatus() async throws {
        let router = Router()
        router.get("/healthz") { _, _ in HTTPResponse.Status.ok }
        router.get("/readyz") { _, _ in HTTPResponse.Status.serviceUnavailable }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let alive = try await HealthcheckCommand.get(
                host: "127.0.0.1", port: port, tls: false, path: "/healthz", timeout: .seconds(10))
            #expect(alive == 200)
            let ready = try await HealthcheckCommand.get(
                host: "127.0.0.1", port: port, tls: false, path: "/readyz", timeout: .seconds(10))
            #expect(ready == 503)
        }
    }

    /// Over TLS (the relay's own listener, HTTP/1.1 by ALPN), with a certificate the check does not verify: it asks
    /// whether this host's relay answers, and the certificate names the public host.
    @Test func healthcheckSpeaksTLSWhenTheRelayDoes() async throws {
        let leaf = try HTTP2TestIdentity.generate().issueServerCertificate(host: "relay.example.com")
        let certificates = try TLSCertificates(certificateChain: leaf.certificatePEM, privateKey: leaf.privateKeyPEM)
        let router = Router()
        router.get("/healthz") { _, _ in HTTPResponse.Status.ok }
        let app = Application(
            router: router,
            server: HTTPServerBuilder { responder in
                RelayTLSChannel(responder: responder, certificates: certificates, settings: RelayHTTP2Settings())
            },
            configuration: .init(address: .hostname("127.0.0.1", port: 0))
        )
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let status = try await HealthcheckCommand.get(
                host: "127.0.0.1", port: port, tls: true, path: "/healthz", timeout: .seconds(10))
            #expect(status == 200)
            await #expect(throws: (any Error).self, "plain HTTP to a TLS listener gets no answer") {
                _ = try await HealthcheckCommand.get(
                    host: "127.0.0.1", port: port, tls: false, path: "/healthz", timeout: .seconds(2))
            }
        }
    }

    @Test func healthcheckFailsWhenNothingListens() async throws {
        // Port 1 (tcpmux) on loopback: nothing listens there on a test machine, so the connection is refused.
        await #expect(throws: (any Error).self) {
            _ = try await HealthcheckCommand.get(
                host: "127.0.0.1", port: 1, tls: false, path: "/healthz", timeout: .seconds(10))
        }
    }

    @Test func healthcheckTargetsLoopbackAndTheConfiguredScheme() {
        var server = RelayConfiguration.Server()
        server.listen = .init(host: "0.0.0.0", port: 9443)
        #expect(HealthcheckCommand.target(server).description == "http://127.0.0.1:9443")
        server.listen = .init(host: "::", port: 8080)
        server.tlsCertFile = "/tls/relay.crt"
        server.tlsKeyFile = "/tls/relay.key"
        let target = HealthcheckCommand.target(server)
        #expect(target.tls)
        #expect(target.description == "https://[::1]:8080")
    }
}
