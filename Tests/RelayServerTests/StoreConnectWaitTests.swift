import Foundation
import Logging
import RelaySimulator
import RelayStore
import RelayStorePostgres
import Testing

@testable import RelayApplication

/// `[store] connect_timeout_seconds`: a relay that starts before its PostgreSQL waits for it, with exponential
/// back-off and a log line per wait, then exits naming the address (issue 38).
@Suite struct StoreConnectWaitTests {
    @Test func theConnectTimeoutHasADefaultAndIsReadFromTheFileAndTheEnvironmentWithinItsBounds() throws {
        #expect(try #require(parsedConfiguration("")).store.connectTimeoutSeconds == 120)
        #expect(
            try #require(parsedConfiguration("[store]\nconnect_timeout_seconds = 30")).store.connectTimeoutSeconds
                == 30)
        let environment = try #require(
            parsedConfiguration("", environment: ["PUSHRELAY_STORE_CONNECT_TIMEOUT_SECONDS": "5"]))
        #expect(environment.store.connectTimeoutSeconds == 5)
        #expect(configurationProblemKeys("[store]\nconnect_timeout_seconds = 0") == ["store.connect_timeout_seconds"])
        #expect(
            configurationProblemKeys("[store]\nconnect_timeout_seconds = 86401") == ["store.connect_timeout_seconds"])
    }

    @Test func theBackOffDoublesFromOneSecondUpToThirty() {
        let delays = (1...8).map { PostgresStore.connectBackOff(afterAttempt: $0) }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
    }

    /// Against a port where nothing listens: tries, and waits between tries with growing pauses, each reported. The
    /// timeout is far away, and the test stops the wait after two: nothing here depends on how fast the machine is.
    @Test func theStoreWaitsWithBackOffReportingEachWait() async throws {
        let store = try PostgresStore(url: try Self.unreachableURL(), logger: Logger(label: "test"))
        defer { Task { await store.shutdown() } }
        let (reported, report) = AsyncStream.makeStream(of: PostgresStore.ConnectWait.self)
        let waiting = Task {
            try await store.waitUntilReachable(within: .seconds(3_600), attemptTimeout: .milliseconds(200)) {
                report.yield($0)
            }
        }
        var waits: [PostgresStore.ConnectWait] = []
        for await wait in reported {
            waits.append(wait)
            if waits.count == 2 { break }
        }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(waits.map(\.attempt) == [1, 2])
        #expect(waits.map(\.retryIn) == [.seconds(1), .seconds(2)], "1 s, then twice as long")
        #expect(waits[1].waited >= .seconds(1), "the first pause is in the second wait's time")
        #expect(waits.allSatisfy { !$0.reason.isEmpty })
    }

    /// Once the timeout has passed it gives up, naming the address and never the password. Only lower bounds on time.
    @Test func theStoreGivesUpAfterTheTimeoutNamingTheAddress() async throws {
        let url = try Self.unreachableURL()
        let store = try PostgresStore(url: url, logger: Logger(label: "test"))
        defer { Task { await store.shutdown() } }
        let started = ContinuousClock.now
        let error = await #expect(throws: StoreError.self) {
            try await store.waitUntilReachable(within: .seconds(1), attemptTimeout: .milliseconds(200))
        }
        #expect(started.duration(to: .now) >= .seconds(1))
        guard case .unavailable(let message)? = error else { return }
        #expect(message.hasPrefix("no connection to PostgreSQL at \(Self.address(url)) within 1 seconds"), "\(message)")
        #expect(!message.contains("secret-password"))
    }

    /// `openStore` logs each wait as a warning, `Waiting for the store`, with the address.
    @Test func openingThePostgresStoreLogsEachWait() async throws {
        var configuration = RelayConfiguration.defaults(directory: "/nonexistent-pushrelay-config")
        configuration.store.url = try Self.unreachableURL()
        configuration.store.connectTimeoutSeconds = 3_600
        let (lines, line) = AsyncStream.makeStream(of: String.self)
        let logger = Logger(label: "test") { _ in StreamingHandler(line: line) }
        let opening = Task {
            try await RelayAssembly.openStore(configuration, logger: logger, connectAttemptTimeout: .milliseconds(200))
        }
        var waited: String?
        for await text in lines where text.contains("Waiting for the store") {
            waited = text
            break
        }
        opening.cancel()
        _ = await opening.result
        let text = try #require(waited)
        #expect(text.hasPrefix("warning "), "\(text)")
        #expect(text.contains(Self.address(configuration.store.url)), "\(text)")
        #expect(!text.contains("secret-password"))
    }

    /// And fails with `store.url`, naming the address, once `[store] connect_timeout_seconds` has passed.
    @Test func openingThePostgresStoreFailsNamingTheAddress() async throws {
        var configuration = RelayConfiguration.defaults(directory: "/nonexistent-pushrelay-config")
        configuration.store.url = try Self.unreachableURL()
        configuration.store.connectTimeoutSeconds = 1
        let error = await #expect(throws: RelayAssemblyError.self) {
            _ = try await RelayAssembly.openStore(configuration, connectAttemptTimeout: .milliseconds(200))
        }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(
            text.hasPrefix(
                "store.url: the store could not be opened: no connection to PostgreSQL at "
                    + "\(Self.address(configuration.store.url)) within 1 seconds"), "\(text)")
        #expect(!text.contains("secret-password"))
    }

    /// Hands every line logged to a stream: `"<level> <message> <metadata>"`.
    struct StreamingHandler: LogHandler {
        let line: AsyncStream<String>.Continuation
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            line.yield("\(event.level) \(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })")
        }
    }

    /// A PostgreSQL URL, with a password, on a port of 127.0.0.1 where nothing listens.
    static func unreachableURL() throws -> String {
        "postgres://relay:secret-password@127.0.0.1:\(try RelayProcess.freePort())/pushrelay?sslmode=disable"
    }

    /// `host:port` of a URL of ``unreachableURL()``.
    static func address(_ url: String) -> String {
        let components = URLComponents(string: url)
        return "\(components?.host ?? ""):\(components?.port ?? 0)"
    }
}
