import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayHTTP2
import RelaySimulator
import RelayStore
import ServiceLifecycle
import Synchronization
import Testing

@testable import RelayServer

/// The relay over real sockets: TLS, HTTP/2 by ALPN, driven by PushRelay's own libcurl pool.
@Suite(.timeLimit(.minutes(1)))
struct LiveHTTP2Tests {
    /// Runs the relay on a free port with TLS, gives the body its URL and a trusting pool, then shuts down.
    static func withLiveRelay(
        _ relay: TestRelay,
        body: @Sendable (String, HTTP2Pool, ServiceGroup) async throws -> Void
    ) async throws {
        let identity = try HTTP2TestIdentity.generate()
        let leaf = try identity.issueServerCertificate(host: "127.0.0.1")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relay-live-\(UUID().uuidString)").path
        let caFile = try identity.write(to: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ports = AsyncStream.makeStream(of: Int.self)
        let app = try buildApplication(
            RelayApplicationParts(
                relay: relay.relay, host: "127.0.0.1", port: 0,
                tls: (leaf.certificatePEM, leaf.privateKeyPEM), logger: relay.logs.logger,
                onServerRunning: { port in
                    if let port { ports.continuation.yield(port) }
                }
            )
        )
        let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: relay.logs.logger))
        let pool = try HTTP2Pool(configuration: .init(maxConnections: 1, caFile: caFile))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            try await body("https://127.0.0.1:\(port)", pool, group)
            await pool.shutdown(gracePeriod: .zero)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    static func push(_ url: String, key: String, token: String) -> HTTP2Request {
        HTTP2Request(
            url: url + "/v1/push",
            headers: [HTTPHeader("authorization", "Bearer \(key)"), HTTPHeader("content-type", "application/json")],
            body: Array(#"{"messages":[{"to":"\#(token)","title":"live","body":"over h2"}]}"#.utf8)
        )
    }

    @Test func pushOverHTTP2WithTLS() async throws {
        let relay = try await TestRelay()
        try await Self.withLiveRelay(relay) { url, pool, _ in
            let response = try await pool.send(Self.push(url, key: relay.key, token: TestRelay.apnsToken))
            #expect(response.status == 200)
            #expect(response.header("ratelimit-limit") == "200")
            #expect(response.header("x-request-id") != nil)
            let ticket = JSONValue.decode(response.body)?.objectValue?["data"]
            #expect(ticket?[0]?["status"] == .string("ok"))
            let health = try await pool.send(HTTP2Request(method: "GET", url: url + "/healthz"))
            #expect(health.status == 200)
        }
    }

    @Test func gracefulShutdownFinishesAcceptedPushes() async throws {
        let gate = Gate()
        let relay = try await TestRelay(gate: gate, waitDeadline: .seconds(20))
        try await Self.withLiveRelay(relay) { url, pool, group in
            async let answer = pool.send(Self.push(url, key: relay.key, token: TestRelay.apnsToken))
            // Wait until the push is with the (held) sender, then ask the relay to stop.
            while relay.senders[.apns]?.sentPushes.isEmpty ?? true { await Task.yield() }
            await group.triggerGracefulShutdown()
            gate.open()
            let response = try await answer
            #expect(response.status == 200)
            #expect(JSONValue.decode(response.body)?.objectValue?["data"]?[0]?["status"] == .string("ok"))
        }
    }
}

/// Records when it is asked to stop, and whether the relay's accepted work had finished by then.
final class StopRecorder: Service, Sendable {
    let relay: TestRelay
    let stoppedAfterDrain = Mutex<Bool?>(nil)

    init(relay: TestRelay) {
        self.relay = relay
    }

    func run() async throws {
        try? await gracefulShutdown()
        // The delivery queue stops first: by now every accepted push has its outcome in the store.
        let sent = relay.senders[.apns]?.sentPushes.count ?? 0
        stoppedAfterDrain.withLock { $0 = sent > 0 && !relay.relay.queue.isAccepting }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct ShutdownOrderTests {
    @Test func servicesStopAfterTheDeliveryQueueHasDrained() async throws {
        let gate = Gate()
        let relay = try await TestRelay(gate: gate, waitDeadline: .milliseconds(10))
        let recorder = StopRecorder(relay: relay)
        let app = try buildApplication(RelayApplicationParts(relay: relay.relay, port: 0, services: [recorder], logger: relay.logs.logger))
        let id = try await app.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#)
            #expect(response.json?["data"]?[0]?["status"] == .string("pending"))
            gate.open()
            return response.json?["data"]?[0]?["id"]?.stringValue ?? ""
        }
        // The test framework shut the services down; the recorder stopped only after the queue had drained, and the
        // accepted push has its final outcome.
        #expect(recorder.stoppedAfterDrain.withLock { $0 } == true)
        let receipts = try await relay.store.receipts(ids: [id], tenantID: relay.tenant.id)
        #expect(receipts.first?.status == .ok)
    }
}
