import Foundation
import Testing

@testable import RelayCore

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(baseDelay: .seconds(1), maxDelay: .seconds(30), window: .seconds(300))
    let start = ContinuousClock.now
    let date = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func ceilingDoublesPerRetryUpToTheMaximum() {
        // unit 1.0 gives the ceiling itself.
        #expect(policy.delay(after: 1, notBefore: nil, unit: 1) == .seconds(1))
        #expect(policy.delay(after: 2, notBefore: nil, unit: 1) == .seconds(2))
        #expect(policy.delay(after: 3, notBefore: nil, unit: 1) == .seconds(4))
        #expect(policy.delay(after: 10, notBefore: nil, unit: 1) == .seconds(30))
    }

    @Test func fullJitterSpansZeroToTheCeiling() {
        #expect(policy.delay(after: 3, notBefore: nil, unit: 0) == .zero)
        #expect(policy.delay(after: 3, notBefore: nil, unit: 0.5) == .seconds(2))
    }

    @Test func retryAfterIsAFloor() {
        #expect(policy.delay(after: 1, notBefore: .seconds(60), unit: 0.3) == .seconds(60))
        #expect(policy.delay(after: 3, notBefore: .seconds(1), unit: 1) == .seconds(4))
    }

    @Test func withoutALifetimeTheDeadlineIsTheWindow() {
        #expect(policy.deadline(start: start, ttl: nil, expiration: nil, date: date) == start + .seconds(300))
        #expect(RetryPolicy().window == .seconds(300), "retry_window_seconds defaults to five minutes")
    }

    @Test func aShorterTTLEndsTheRetriesSooner() {
        #expect(policy.deadline(start: start, ttl: 60, expiration: nil, date: date) == start + .seconds(60))
        #expect(policy.deadline(start: start, ttl: 3600, expiration: nil, date: date) == start + .seconds(300))
        // "Now or never": the first attempt only.
        #expect(policy.deadline(start: start, ttl: 0, expiration: nil, date: date) == start)
    }

    @Test func anExpirationIsReadAgainstTheWallClock() {
        let in90 = Int64(date.timeIntervalSince1970) + 90
        #expect(policy.deadline(start: start, ttl: nil, expiration: in90, date: date) == start + .seconds(90))
        #expect(policy.deadline(start: start, ttl: nil, expiration: in90 + 86_400, date: date) == start + .seconds(300))
        #expect(policy.deadline(start: start, ttl: nil, expiration: 1, date: date) == start, "already expired")
        // The ttl wins over an expiration, as APNs and Expo read them.
        #expect(policy.deadline(start: start, ttl: 30, expiration: in90, date: date) == start + .seconds(30))
    }
}

@Suite struct RetryBudgetTests {
    let t0 = ContinuousClock.now

    @Test func retriesAreLimitedToAShareOfAttempts() {
        var budget = RetryBudget(ratio: 0.2, cap: 100, initial: 0, minimumPerSecond: 0)
        var retries = 0
        for _ in 0..<1000 {
            budget.recordAttempts(now: t0)
            if budget.withdrawRetry(now: t0) { retries += 1 }  // every attempt fails and wants a retry
        }
        #expect(retries == 200)
    }

    @Test func initialBalanceAllowsAFewRetriesAtOnce() {
        var budget = RetryBudget(ratio: 0.2, cap: 100, initial: 3)
        let granted = (0..<4).map { _ in budget.withdrawRetry(now: t0) }
        #expect(granted == [true, true, true, false])
    }

    @Test func balanceIsCapped() {
        var budget = RetryBudget(ratio: 1, cap: 5, initial: 0)
        budget.recordAttempts(100, now: t0)
        #expect(budget.balance == 5)
        budget.recordAttempts(now: t0 + .seconds(60))
        #expect(budget.balance == 5)
    }

    @Test func timeDepositsTheMinimumRate() {
        var budget = RetryBudget(ratio: 0.2, cap: 100, initial: 0, minimumPerSecond: 8)
        let first = budget.withdrawRetry(now: t0)
        #expect(!first)
        #expect(budget.timeUntilToken(now: t0) == .milliseconds(125))
        #expect(budget.timeUntilToken(now: t0 + .milliseconds(25)) == .milliseconds(100))
        let early = budget.withdrawRetry(now: t0 + .milliseconds(50))
        let due = budget.withdrawRetry(now: t0 + .milliseconds(125))
        let again = budget.withdrawRetry(now: t0 + .milliseconds(125))
        #expect([early, due, again] == [false, true, false])
        #expect(budget.timeUntilToken(now: t0 + .seconds(1)) == .zero)
    }

    @Test func withoutAMinimumRateOnlyFirstAttemptsRefill() {
        var budget = RetryBudget(ratio: 0.5, cap: 100, initial: 0, minimumPerSecond: 0)
        #expect(budget.timeUntilToken(now: t0) == nil)
        let later = budget.withdrawRetry(now: t0 + .seconds(3600))
        budget.recordAttempts(2, now: t0 + .seconds(3600))
        let afterAttempts = budget.withdrawRetry(now: t0 + .seconds(3600))
        #expect([later, afterAttempts] == [false, true])
    }
}
