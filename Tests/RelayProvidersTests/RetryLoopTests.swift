import Foundation
import Testing

@testable import RelayCore
@testable import RelayProviders

/// The retry loop under an injected clock: which back-offs it asks for, and when it stops.
@Suite struct RetryLoopTests {
    let transient = UpstreamVerdict.retry(
        notBefore: nil,
        freshConnection: false,
        otherwise: .unavailable(reason: "503", retryAfter: nil)
    )

    func run(
        _ verdicts: [UpstreamVerdict],
        policy: RetryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(30)),
        budget: RetryBudget = RetryBudget(),
        unit: Double = 1
    ) async -> (DeliveryReport, [Duration], [AttemptInstructions]) {
        let sleeper = RecordingSleeper()
        let retries = RetryLoop(policy: policy, budget: budget)
        var seen: [AttemptInstructions] = []
        let report = await retries.deliver(environment: .test(clock: TestClock(), sleeper: sleeper, unit: unit)) {
            seen.append($0)
            return AttemptResult(verdict: verdicts[min($0.number - 1, verdicts.count - 1)], status: 503)
        }
        return (report, sleeper.recorded, seen)
    }

    @Test func transientFailuresBackOffExponentiallyThenSucceed() async {
        let (report, sleeps, _) = await run([transient, transient, .final(.delivered(providerMessageID: "x"))])
        #expect(report.outcome == .delivered(providerMessageID: "x"))
        #expect(report.attempts == 3)
        #expect(sleeps == [.seconds(1), .seconds(2)])
    }

    @Test func jitterScalesTheBackOff() async {
        let (_, sleeps, _) = await run([transient, transient, .final(.delivered(providerMessageID: nil))], unit: 0.25)
        #expect(sleeps == [.milliseconds(250), .milliseconds(500)])
    }

    @Test func attemptsAreBoundedAndTheFallbackOutcomeIsReported() async {
        let (report, sleeps, _) = await run([transient])
        #expect(report.attempts == 3)
        #expect(report.outcome == .unavailable(reason: "503", retryAfter: nil))
        #expect(sleeps.count == 2)
    }

    @Test func retryAfterIsHonoured() async {
        let throttled = UpstreamVerdict.retry(
            notBefore: .seconds(60),
            freshConnection: false,
            otherwise: .unavailable(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))
        )
        let (_, sleeps, _) = await run([throttled, .final(.delivered(providerMessageID: nil))], unit: 0.1)
        #expect(sleeps == [.seconds(60)])
    }

    @Test func freshConnectionIsAskedForWhenTheReasonCallsForIt() async {
        let shutdown = UpstreamVerdict.retry(
            notBefore: nil,
            freshConnection: true,
            otherwise: .unavailable(reason: "Shutdown", retryAfter: nil)
        )
        let (_, _, seen) = await run([shutdown, .final(.delivered(providerMessageID: nil))])
        #expect(seen.map(\.freshConnection) == [false, true])
    }

    @Test func expiredCredentialIsRenewedOnceWithoutBackOff() async {
        let expired = UpstreamVerdict.refreshCredentialAndRetry(otherwise: .configurationError(reason: "ExpiredProviderToken"))
        let (report, sleeps, seen) = await run([expired, expired, expired])
        #expect(seen.map(\.renewCredential) == [false, true])
        #expect(report.outcome == .configurationError(reason: "ExpiredProviderToken"))
        #expect(sleeps.isEmpty)
    }

    @Test func spentBudgetStopsRetries() async {
        let (report, sleeps, _) = await run([transient], budget: RetryBudget(ratio: 0, cap: 10, initial: 0))
        #expect(report.attempts == 1)
        #expect(sleeps.isEmpty)
        #expect(report.outcome == .unavailable(reason: "503", retryAfter: nil))
    }

    @Test func finalOutcomesAreNeverRetried() async {
        let dead = UpstreamVerdict.final(.tokenInvalid(.deviceNotRegistered, reason: "Unregistered", since: nil))
        let (report, sleeps, _) = await run([dead])
        #expect(report.attempts == 1)
        #expect(sleeps.isEmpty)
        #expect(report.outcome.removeToken)
    }
}
