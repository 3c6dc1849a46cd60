import Foundation
import RelayCore
import RelayHTTP2
import RelaySimulator
import Synchronization
import Testing

@testable import RelayProviders

/// The senders through the real transport (HTTP/2 over TLS) against the provider simulator with injected faults: an
/// outage, a 503 storm, resets, cut connections and stalls; the faults are switched by what the sender has done (its
/// waits), never by time.
///
/// A single push's waits run on the test clock (each moves it forward at once), so an outage of a minute costs no
/// minute. Many pushes at once wait in real time instead, with back-offs and open periods of milliseconds: waits that
/// overlap would each move a test clock forward, far past what the same waits take together.
@Suite(.timeLimit(.minutes(1)))
struct UpstreamOutageTests {
    typealias Harness = ProviderSimulatorEndToEndTests.Harness

    /// What the sleeper's hook reaches: the simulator (known once the harness has started it), the retry loop, and
    /// the circuit phases seen at each wait.
    final class Observer: Sendable {
        private let state = Mutex<(simulator: ProviderSimulator?, phases: [CircuitBreaker.Phase])>((nil, []))
        let retries: RetryLoop
        let provider: Provider
        /// The wait after which the outage ends.
        let endAfter: Int

        init(retries: RetryLoop, provider: Provider, endAfter: Int) {
            self.retries = retries
            self.provider = provider
            self.endAfter = endAfter
        }

        func attach(_ simulator: ProviderSimulator) { state.withLock { $0.simulator = simulator } }

        var phases: [CircuitBreaker.Phase] { state.withLock { $0.phases } }

        func waited(_ count: Int) {
            let phase = retries.circuitPhase(of: provider)
            let simulator = state.withLock { state in
                state.phases.append(phase)
                return state.simulator
            }
            if count == endAfter { simulator?.injectFaults(nil) }
        }
    }

    static let plain = PushMessage(to: [], title: "Incident", body: "DB down")

    func pushes(_ base: PushMessage = plain, tokens: [String], provider: Provider) throws -> [ResolvedPush] {
        var message = base
        message.to = tokens
        message.provider = provider
        return try resolved(message)
    }

    func token(_ provider: Provider, _ index: Int = 0) -> String {
        let code = String(format: "%04x", 0x1000 + index)
        return switch provider {
        case .apns: ProviderTestTokens.apns(code)
        case .fcm: ProviderTestTokens.fcm(code)
        case .expo: ProviderTestTokens.expo(code)
        }
    }

    func sender(_ harness: Harness, _ provider: Provider) -> any PushSender {
        switch provider {
        case .apns: harness.apns
        case .fcm: harness.fcm
        case .expo: harness.expo
        }
    }

    @Test(arguments: [Provider.apns, .fcm, .expo])
    func anOutageLongerThanTheOldRetriesDelaysThePushAndItIsDeliveredWhenTheUpstreamIsBack(
        _ provider: Provider
    ) async throws {
        // The circuit opens after 3 failures in a row; the outage ends after the sender's 8th wait, more than a
        // minute into it on the test clock (the old three attempts spanned 3 s).
        let retries = RetryLoop(breaker: CircuitBreaker.Settings(failureThreshold: 3, openDelay: .seconds(2)))
        let observer = Observer(retries: retries, provider: provider, endAfter: 8)
        let harness = try await Harness(
            retries: retries, sleeper: RecordingSleeper { observer.waited($0) })
        observer.attach(harness.simulator)
        harness.simulator.injectFaults(.outage(.serviceUnavailable))

        let reports = await sender(harness, provider).send(try pushes(tokens: [token(provider)], provider: provider))
        let report = try #require(reports.first)
        #expect(report.outcome.shortDescription == "delivered", "\(report)")
        #expect(report.attempts > 3)
        #expect(report.latency > .seconds(60))
        let simulated: SimulatedProvider =
            switch provider {
            case .apns: .apns
            case .fcm: .fcm
            case .expo: .expoSend
            }
        let statuses = harness.simulator.received(simulated).map(\.status)
        #expect(statuses == Array(repeating: 503, count: report.attempts - 1) + [200])
        // The circuit opened during the outage, held the push between probes, and closed with the probe that answered.
        #expect(observer.phases.contains(.open))
        #expect(retries.circuitPhase(of: provider) == .closed)
        try await harness.close()
    }

    /// The retries of many pushes at once, in real time: the production shape, with milliseconds for seconds.
    static func quickRetries(maxAttemptsAfterTimeout: Int = RetryLoop.defaultMaxAttemptsAfterTimeout) -> RetryLoop {
        RetryLoop(
            policy: RetryPolicy(baseDelay: .milliseconds(10), maxDelay: .milliseconds(200), window: .seconds(60)),
            breaker: CircuitBreaker.Settings(openDelay: .milliseconds(20), maxOpenDelay: .milliseconds(200)),
            maxAttemptsAfterTimeout: maxAttemptsAfterTimeout
        )
    }

    @Test func aStormOf30PercentServiceUnavailableEndsWithEveryPushDelivered() async throws {
        let harness = try await Harness(retries: Self.quickRetries(), environment: .live)
        harness.simulator.injectFaults(FaultInjection(.serviceUnavailable, share: 0.3))
        let all = try (0..<200).flatMap { try pushes(tokens: [token(.apns, $0)], provider: .apns) }
        let reports = await harness.apns.send(all)
        #expect(reports.count == 200)
        #expect(reports.allSatisfy { $0.outcome.shortDescription == "delivered" })
        #expect(reports.contains { $0.attempts > 2 })
        #expect(harness.simulator.faultsInjected >= 60)
        // Every push delivered exactly once, with its one apns-id.
        let delivered = harness.simulator.received(.apns).filter { $0.status == 200 }
        #expect(delivered.count == 200)
        #expect(Set(delivered.compactMap { $0.header("apns-id") }).count == 200)
        try await harness.close()
    }

    @Test(arguments: [
        FaultInjection(.resetStream, share: 0.1),
        FaultInjection(.dropConnection, share: 0.05),
        FaultInjection(.stall, share: 0.1),
    ])
    func resetsCutConnectionsAndStallsEndWithEveryPushDelivered(_ injection: FaultInjection) async throws {
        // A stalled request ends at the pool's deadline, here a real 500 ms. A push may meet more than one stall: it
        // may go again after each here (a stalled request is never delivered).
        let harness = try await Harness(
            requestTimeout: .milliseconds(500), retries: Self.quickRetries(maxAttemptsAfterTimeout: 10),
            environment: .live)
        harness.simulator.injectFaults(injection)
        let all = try (0..<100).flatMap { try pushes(tokens: [token(.fcm, $0)], provider: .fcm) }
        let reports = await harness.fcm.send(all)
        #expect(
            reports.allSatisfy { $0.outcome.shortDescription == "delivered" },
            "\(Set(reports.map { "\($0.outcome) after \($0.attempts)" }))")
        #expect(harness.simulator.faultsInjected >= 5)
        #expect(reports.contains { $0.attempts > 1 })
        try await harness.close()
    }

    @Test func anUpstreamThatStallsEverythingEndsThePushWithAFinalErrorOnlyAtItsDeadline() async throws {
        // Stalled requests may have been delivered: without a bound on retries after a timeout, the push goes on
        // until its deadline.
        let window = Duration.seconds(5)
        let harness = try await Harness(
            requestTimeout: .milliseconds(300),
            retries: RetryLoop(policy: RetryPolicy(window: window), maxAttemptsAfterTimeout: 10))
        harness.simulator.injectFaults(.outage(.stall))
        let report = await harness.apns.send(try pushes(tokens: [token(.apns)], provider: .apns)[0])
        #expect(report.outcome == RetryLoop.noAnswer)
        #expect(report.outcome.errorCode == "ProviderUnavailable")
        // Back-offs of 0.5, 1 and 2 s, then a last attempt at the deadline.
        #expect(report.attempts == 5)
        #expect(report.latency == window)
        try await harness.close()
    }

    /// An upstream that answers after the request timeout: each attempt arrives, and may be delivered. The timeout
    /// is a real 2 s, long enough for the request to reach the simulator under a loaded suite (300 ms was not).
    func slowUpstream(maxAttemptsAfterTimeout: Int) async throws -> (Harness, DeliveryReport) {
        let harness = try await Harness(
            requestTimeout: .seconds(2),
            retries: RetryLoop(maxAttemptsAfterTimeout: maxAttemptsAfterTimeout)
        ) { $0.latency = .seconds(60) }
        let report = await harness.apns.send(try pushes(tokens: [token(.apns)], provider: .apns)[0])
        return (harness, report)
    }

    @Test func anUpstreamAnsweringAfterTheTimeoutReceivesThePushAtMostTwiceWithOneAPNsID() async throws {
        let (harness, report) = try await slowUpstream(
            maxAttemptsAfterTimeout: RetryLoop.defaultMaxAttemptsAfterTimeout)
        #expect(report.outcome == RetryLoop.noAnswer)
        #expect(report.outcome.errorCode == "ProviderUnavailable")
        #expect(report.attempts == 2)
        let arrivals = harness.simulator.received(.apns)
        #expect(arrivals.count == 2)
        #expect(Set(arrivals.compactMap { $0.header("apns-id") }).count == 1)
        // One back-off between them, on the test clock.
        #expect(harness.sleeper.recorded.count == 1)
        try await harness.close()
    }

    @Test func withNoAttemptAfterATimeoutAnUpstreamAnsweringLateReceivesThePushOnce() async throws {
        let (harness, report) = try await slowUpstream(maxAttemptsAfterTimeout: 0)
        #expect(report.outcome == RetryLoop.noAnswer)
        #expect(report.attempts == 1)
        #expect(harness.simulator.received(.apns).count == 1)
        #expect(harness.sleeper.recorded.isEmpty)
        try await harness.close()
    }

    @Test func aPushWithAShortTTLEndsAtItsTTLAndACriticalAlertKeepsTryingForTheWindow() async throws {
        let harness = try await Harness(retries: RetryLoop(policy: RetryPolicy(window: .seconds(120))))
        harness.simulator.injectFaults(.outage(.serviceUnavailable))
        var shortLived = Self.plain
        shortLived.ttl = 10
        var critical = Self.plain
        critical.isCriticalAlert = true
        let short = await harness.apns.send(try pushes(shortLived, tokens: [token(.apns, 1)], provider: .apns)[0])
        #expect(short.outcome.errorCode == "ProviderUnavailable")
        #expect(short.latency == .seconds(10))
        #expect(short.attempts > 1)
        let page = await harness.apns.send(try pushes(critical, tokens: [token(.apns, 2)], provider: .apns)[0])
        #expect(page.outcome.errorCode == "ProviderUnavailable")
        #expect(page.latency == .seconds(120))
        // Every attempt of the short-lived push carried the same expiration: its ttl counts from the first.
        let expirations = Set(
            harness.simulator.received(.apns).filter { $0.path.hasSuffix(token(.apns, 1)) }
                .compactMap { $0.header("apns-expiration") })
        #expect(expirations.count == 1)
        try await harness.close()
    }
}
