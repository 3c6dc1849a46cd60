import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication
@testable import RelayServer

/// A memory store whose probe (`ping`) can fail or hang, and whose commits can fail, as a store in trouble would.
final class FalteringStore: ForwardingPushStore {
    let base = MemoryStore()

    private struct State {
        var pingFails = false
        var pingHangs = false
        var commitsFail = false
        var pings = 0
        var hung: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// How many probes the store was asked.
    var pings: Int { state.withLock { $0.pings } }

    func failPings(_ fail: Bool) { state.withLock { $0.pingFails = fail } }
    func failCommits(_ fail: Bool) { state.withLock { $0.commitsFail = fail } }
    /// Probes from now on wait until ``release()``.
    func hangPings() { state.withLock { $0.pingHangs = true } }

    /// Answers the probes that hang, and lets later ones answer at once.
    func release() {
        let hung = state.withLock { state in
            state.pingHangs = false
            defer { state.hung = [] }
            return state.hung
        }
        for continuation in hung { continuation.resume() }
    }

    func ping() async throws {
        let (fails, hangs) = state.withLock { state in
            state.pings += 1
            return (state.pingFails, state.pingHangs)
        }
        if hangs {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { state in
                    if state.pingHangs { state.hung.append(continuation) }
                    return state.pingHangs
                }
                if !waiting { continuation.resume() }
            }
        }
        if fails { throw StoreError.unavailable("the probe is failing (test)") }
        try await base.ping()
    }

    func commit(_ batch: StoreBatch) async throws {
        if state.withLock({ $0.commitsFail }) { throw StoreError.unavailable("commits are failing (test)") }
        try await base.commit(batch)
    }
}

/// A relay on a ``FalteringStore`` with a scripted APNs sender and a short readiness timeout.
struct ReadinessRelay {
    let store = FalteringStore()
    let relay: Relay
    var key = ""

    init(readinessTimeout: Duration = .milliseconds(500)) async throws {
        relay = Relay(
            store: store,
            senders: [.apns: ScriptedSender(.apns)],
            settings: RelaySettings(waitDeadline: .seconds(5), readinessTimeout: readinessTimeout)
        )
        (_, key) = try await TestRelay.addTenant(to: store, name: "acme")
    }

    var application: some ApplicationProtocol {
        get throws { try buildApplication(RelayApplicationParts(relay: relay, logger: LogCapture().logger)) }
    }
}

extension TestClientProtocol {
    func ready() async throws -> TestResponse { try await execute(uri: "/readyz", method: .get) }
}

/// `/readyz` tells a load balancer the truth about the store (issue 37 item 3): 503 naming the store while its probe
/// fails or does not answer within `[server] readiness_timeout_ms`, 503 naming the commits while the last one failed,
/// and 200 otherwise; `/healthz` (liveness) does not look at the store.
///
/// The test closures spell out `async throws`: without it Swift 6.3 may take them for closures that do not throw.
@Suite(.timeLimit(.minutes(1)))
struct ReadinessTests {
    @Test func aHealthyRelayIsReady() async throws {
        let relay = try await ReadinessRelay()
        try await relay.application.test(.router) { (client) async throws in
            let ready = try await client.ready()
            #expect(ready.status == .ok)
            #expect(ready.object["status"] == .string("ready"))
            #expect(ready.object["store"] == .string("ok"))
            #expect(ready.object["failing"] == .array([]))
            #expect(ready.object["detail"] == nil)
        }
    }

    @Test func aFailingProbeNamesTheStore() async throws {
        let relay = try await ReadinessRelay()
        try await relay.application.test(.router) { (client) async throws in
            relay.store.failPings(true)
            let down = try await client.ready()
            #expect(down.status == .serviceUnavailable)
            #expect(down.object["status"] == .string("not_ready"))
            #expect(down.object["store"] == .string("unavailable"))
            #expect(down.object["failing"] == .array([.string("store")]))
            #expect(down.object["detail"]?.stringValue?.contains("probe failed") == true)
            // Liveness does not depend on the store.
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)

            relay.store.failPings(false)
            #expect(try await client.ready().status == .ok)
        }
    }

    /// A probe that never answers gives 503 at the timeout; later calls join it rather than start more probes.
    @Test func aHangingProbeAnswers503AtTheTimeout() async throws {
        let relay = try await ReadinessRelay(readinessTimeout: .milliseconds(200))
        try await relay.application.test(.router) { (client) async throws in
            relay.store.hangPings()
            for _ in 0..<3 {
                let hung = try await client.ready()
                #expect(hung.status == .serviceUnavailable)
                #expect(hung.object["failing"] == .array([.string("store")]))
                #expect(hung.object["detail"]?.stringValue?.contains("did not answer within 200 ms") == true)
                #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            }
            #expect(relay.store.pings == 1)
            // Once the store answers, so does the probe, and the relay is ready again.
            relay.store.release()
            #expect(try await client.ready().status == .ok)
        }
    }

    /// The store answers its probe but the last commit failed: 503 naming the commits, until one succeeds.
    @Test func failingCommitsMakeTheRelayUnready() async throws {
        let relay = try await ReadinessRelay()
        let push = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#
        try await relay.application.test(.router) { (client) async throws in
            relay.store.failCommits(true)
            _ = try await client.post("/v1/push", key: relay.key, json: push)
            #expect(relay.relay.commits.isFailing)
            let failing = try await client.ready()
            #expect(failing.status == .serviceUnavailable)
            #expect(failing.object["store"] == .string("ok"))
            #expect(failing.object["failing"] == .array([.string("commits")]))
            // The push's outcome is held in memory until the store takes it.
            #expect(
                failing.object["detail"]?.stringValue?.contains("held in memory until the store takes them") == true)

            relay.store.failCommits(false)
            #expect(try await client.post("/v1/push", key: relay.key, json: push).status == .ok)
            let ready = try await client.ready()
            #expect(ready.status == .ok)
            #expect(ready.object["failing"] == .array([]))
        }
    }

    @Test func theProbeWaitsAtMostOneSecondByDefault() throws {
        let configuration = try #require(parsedConfiguration("[server]\nlisten = \"127.0.0.1:8080\""))
        #expect(configuration.server.readinessTimeoutMs == 1_000)
        #expect(RelayAssembly.settings(configuration).readinessTimeout == .seconds(1))
        #expect(RelaySettings().readinessTimeout == .seconds(1))
    }

    @Test func theTimeoutIsReadFromTheFileAndTheEnvironment() throws {
        let file = try #require(parsedConfiguration("[server]\nreadiness_timeout_ms = 250"))
        #expect(file.server.readinessTimeoutMs == 250)
        #expect(RelayAssembly.settings(file).readinessTimeout == .milliseconds(250))
        let environment = try #require(
            parsedConfiguration("", environment: ["PUSHRELAY_SERVER_READINESS_TIMEOUT_MS": "3000"]))
        #expect(environment.server.readinessTimeoutMs == 3_000)
        #expect(configurationProblemKeys("[server]\nreadiness_timeout_ms = 99") == ["server.readiness_timeout_ms"])
    }
}
