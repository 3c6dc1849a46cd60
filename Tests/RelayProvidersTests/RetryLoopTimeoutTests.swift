import Foundation
import Metrics
import MetricsTestKit
import RelayHTTP2
import Testing

@testable import RelayCore
@testable import RelayProviders

/// The retry loop's bound on attempts that were sent and not answered in time (`[upstream]
/// max_attempts_after_timeout`): each may have been delivered, so each retry risks a duplicate on the device.
@Suite(.timeLimit(.minutes(1)))
struct RetryLoopTimeoutTests {
    /// A request on a stream whose deadline passed: the upstream may have received it.
    static let timedOutOnStream = AttemptResult(
        failure: HTTP2Error(.timeout, detail: "the request's deadline passed", requestSent: true))
    /// A request whose deadline passed in the pool's queue: never sent.
    static let timedOutQueued = AttemptResult(failure: HTTP2Error(.timeout, detail: "no stream became free in time"))
    static let connectFailed = AttemptResult(failure: HTTP2Error(.connectFailed))
    static let delivered = AttemptResult(verdict: .final(.delivered(providerMessageID: "x")), status: 200)

    final class Upstream: Sendable {}

    struct Run {
        var report: DeliveryReport
        var sleeps: [Duration]
        var attempts: Int
    }

    /// Runs the loop over one message whose attempts get `results`, the last repeating, on a test clock.
    func loop(
        _ results: [AttemptResult],
        maxAttemptsAfterTimeout: Int = RetryLoop.defaultMaxAttemptsAfterTimeout,
        lifetime: Duration = .seconds(300)
    ) async -> Run {
        let clock = TestClock()
        let sleeper = RecordingSleeper()
        let environment = SenderEnvironment.test(clock: clock, sleeper: sleeper, unit: 1)
        let retries = RetryLoop(
            policy: RetryPolicy(baseDelay: .seconds(1), maxDelay: .seconds(30), window: .seconds(300)),
            maxAttemptsAfterTimeout: maxAttemptsAfterTimeout)
        let upstream = Upstream()
        let gate = retries.gate(for: ObjectIdentifier(upstream), provider: .apns)
        let terms = [RetryLoop.Terms(deadline: clock.instant + lifetime, critical: false)]
        var attempts = 0
        let reports = await retries.run(
            terms: terms, renewableCredential: false, gate: gate, environment: environment
        ) { pending, instructions in
            attempts += 1
            return pending.map { _ in results[min(instructions.number - 1, results.count - 1)] }
        }
        return Run(report: reports[0], sleeps: sleeper.recorded, attempts: attempts)
    }

    @Test func onlyATimeoutOnAStreamCountsAsSent() {
        #expect(Self.timedOutOnStream.timedOutAfterSending)
        #expect(!Self.timedOutQueued.timedOutAfterSending)
        #expect(!Self.connectFailed.timedOutAfterSending)
        #expect(!AttemptResult(failure: HTTP2Error(.connectionLost)).timedOutAfterSending)
        #expect(!AttemptResult(failure: HTTP2Error(.streamReset)).timedOutAfterSending)
    }

    @Test func aTimedOutAttemptGoesAgainOnceAfterABackOffThenThePushEndsSayingTheProviderDidNotAnswer() async {
        let run = await loop([Self.timedOutOnStream])
        #expect(run.attempts == 2)
        #expect(run.sleeps == [.seconds(1)])
        #expect(run.report.attempts == 2)
        #expect(run.report.outcome == RetryLoop.noAnswer)
        #expect(run.report.outcome.errorCode == "ProviderUnavailable")
        guard case .unavailable(let reason, _) = run.report.outcome else { return }
        #expect(reason.contains("did not answer in time"))
        #expect(reason.contains("may or may not have been delivered"))
    }

    @Test func withNoAttemptAfterATimeoutThePushEndsAtItsFirst() async {
        let run = await loop([Self.timedOutOnStream], maxAttemptsAfterTimeout: 0)
        #expect(run.attempts == 1)
        #expect(run.sleeps.isEmpty)
        #expect(run.report.outcome == RetryLoop.noAnswer)
    }

    @Test func aRetryAfterATimeoutThatIsAnsweredIsDelivered() async {
        let run = await loop([Self.timedOutOnStream, Self.delivered])
        #expect(run.attempts == 2)
        #expect(run.report.outcome == .delivered(providerMessageID: "x"))
    }

    @Test func failuresBeforeSendingDoNotCountAgainstTheBound() async {
        // Two timed-out attempts are allowed; the connection failures and the queued timeout between them never
        // reached the upstream.
        let run = await loop(
            [Self.timedOutOnStream, Self.connectFailed, Self.timedOutQueued, Self.timedOutOnStream, Self.delivered],
            maxAttemptsAfterTimeout: 2)
        #expect(run.attempts == 5)
        #expect(run.report.outcome == .delivered(providerMessageID: "x"))
        // With the default, the second timed-out attempt ends it.
        let bounded = await loop(
            [Self.timedOutOnStream, Self.connectFailed, Self.timedOutQueued, Self.timedOutOnStream, Self.delivered])
        #expect(bounded.attempts == 4)
        #expect(bounded.report.outcome == RetryLoop.noAnswer)
    }

    @Test func failuresBeforeSendingAreRetriedUntilTheDeadlineAsBefore() async {
        let run = await loop([Self.timedOutQueued, Self.connectFailed], lifetime: .seconds(10))
        // Back-offs of 1, 2 and 4 s, then 3 s to the deadline and a last attempt there.
        #expect(run.sleeps == [1, 2, 4, 3].map { Duration.seconds($0) })
        #expect(run.attempts == 5)
        #expect(run.report.outcome == .unavailable(reason: "transport: connectFailed", retryAfter: nil))
    }

    @Test func aTimedOutAttemptIsRetriedOnlyWithinTheDeadline() async {
        // The deadline has come when the first attempt times out: no retry, and the push says it may have arrived.
        let run = await loop([Self.timedOutOnStream], maxAttemptsAfterTimeout: 3, lifetime: .zero)
        #expect(run.attempts == 1)
        #expect(run.report.outcome == RetryLoop.noAnswer)
    }

    @Test func timedOutAttemptsAreCounted() async {
        let metrics = TestMetrics()
        await withMetricsFactory(metrics) {
            _ = await loop([Self.timedOutQueued, Self.timedOutOnStream])
            #expect(
                metrics.counterTotal(label: "relay_upstream_timeouts_total", dimensions: [("provider", "apns")]) == 2)
            #expect(
                metrics.counterTotal(
                    label: "relay_upstream_retries_total", dimensions: [("provider", "apns"), ("cause", "timeout")])
                    == 2)
        }
    }
}
