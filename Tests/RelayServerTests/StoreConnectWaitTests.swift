import Foundation
import Glibc
import Logging
import RelayStore
import RelayStorePostgres
import Synchronization
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

    /// Against a port where nothing listens: tries, waits with growing pauses (each reported), and gives up once the
    /// timeout has passed, naming the address. Only lower bounds on time: a busy machine may be slower.
    @Test func theStoreWaitsWithBackOffAndGivesUpNamingTheAddress() async throws {
        let port = try Self.closedPort()
        let store = try PostgresStore(
            url: "postgres://relay:secret-password@127.0.0.1:\(port)/pushrelay?sslmode=disable",
            logger: Logger(label: "test"))
        defer { Task { await store.shutdown() } }
        let waits = Waits()
        let started = ContinuousClock.now
        let error = await #expect(throws: StoreError.self) {
            try await store.waitUntilReachable(within: .seconds(4), attemptTimeout: .milliseconds(200)) {
                waits.append($0)
            }
        }
        #expect(started.duration(to: .now) >= .seconds(4))
        guard case .unavailable(let message)? = error else { return }
        #expect(message.contains("no connection to PostgreSQL at 127.0.0.1:\(port) within 4 seconds"), "\(message)")
        #expect(!message.contains("secret-password"))
        let seen = waits.all
        #expect(!seen.isEmpty, "each wait is reported")
        #expect(seen.map(\.attempt) == (0..<seen.count).map { $0 + 1 })
        for wait in seen {
            #expect(wait.retryIn > .zero && wait.retryIn <= PostgresStore.connectBackOff(afterAttempt: wait.attempt))
        }
        #expect(seen.first?.retryIn == .seconds(1) || seen.count == 1, "the first pause is 1 s when time is left")
    }

    /// `openStore` logs each wait as `Waiting for the store` with the address, and fails with `store.url` naming it.
    @Test func openingThePostgresStoreLogsEachWaitAndFailsNamingTheAddress() async throws {
        let port = try Self.closedPort()
        var configuration = RelayConfiguration.defaults(directory: "/nonexistent-pushrelay-config")
        configuration.store.url = "postgres://relay:secret-password@127.0.0.1:\(port)/pushrelay?sslmode=disable"
        configuration.store.connectTimeoutSeconds = 3
        let logs = LogCapture()
        let error = await #expect(throws: RelayAssemblyError.self) {
            _ = try await RelayAssembly.openStore(
                configuration, logger: logs.logger, connectAttemptTimeout: .milliseconds(200))
        }
        let text = "\(error.map { "\($0)" } ?? "")"
        #expect(
            text.hasPrefix(
                "store.url: the store could not be opened: no connection to PostgreSQL at 127.0.0.1:\(port) within 3 seconds"
            ), "\(text)")
        #expect(!text.contains("secret-password"))
        let waits = logs.all.filter { $0.contains("Waiting for the store") }
        #expect(!waits.isEmpty, "\(logs.all)")
        #expect(waits.allSatisfy { $0.hasPrefix("warning") && $0.contains("127.0.0.1:\(port)") })
    }

    final class Waits: Sendable {
        private let waits = Mutex<[PostgresStore.ConnectWait]>([])
        var all: [PostgresStore.ConnectWait] { waits.withLock { $0 } }
        func append(_ wait: PostgresStore.ConnectWait) { waits.withLock { $0.append(wait) } }
    }

    /// A port on 127.0.0.1 that nothing listens on (bound, then closed).
    static func closedPort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
