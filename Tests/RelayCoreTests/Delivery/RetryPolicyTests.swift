import Testing

@testable import RelayCore

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(30))

    @Test func attemptsAreBounded() {
        #expect(policy.allowsRetry(after: 1))
        #expect(policy.allowsRetry(after: 2))
        #expect(!policy.allowsRetry(after: 3))
    }

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
}

@Suite struct RetryBudgetTests {
    @Test func retriesAreLimitedToAShareOfAttempts() {
        var budget = RetryBudget(ratio: 0.2, cap: 100, initial: 0)
        var retries = 0
        for _ in 0..<1000 {
            budget.recordAttempt()
            if budget.withdrawRetry() { retries += 1 }  // every attempt fails and wants a retry
        }
        #expect(retries == 200)
    }

    @Test func initialBalanceAllowsAFewRetriesAtOnce() {
        var budget = RetryBudget(ratio: 0.2, cap: 100, initial: 3)
        let granted = (0..<4).map { _ in budget.withdrawRetry() }
        #expect(granted == [true, true, true, false])
    }

    @Test func balanceIsCapped() {
        var budget = RetryBudget(ratio: 1, cap: 5, initial: 0)
        for _ in 0..<100 { budget.recordAttempt() }
        #expect(budget.balance == 5)
    }
}
