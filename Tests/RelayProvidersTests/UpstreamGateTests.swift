import Testing

@testable import RelayCore
@testable import RelayProviders

/// The gate's path for a healthy upstream, which takes no lock: it must decide exactly as the locked path would.
@Suite struct UpstreamGateTests {
    let start = ContinuousClock.now

    func gate(budget: RetryBudget = RetryBudget(), threshold: Int = 3) -> UpstreamGate {
        UpstreamGate(
            provider: .apns,
            breaker: CircuitBreaker.Settings(failureThreshold: threshold, openDelay: .seconds(1)),
            budget: budget,
            board: CircuitBoard(provider: .apns)
        )
    }

    @Test func firstAttemptsCountedWithoutTheLockFillTheBudgetBeforeARetryTakesFromIt() {
        // An empty budget that time never refills: only first attempts deposit, one token per attempt.
        let gate = gate(budget: RetryBudget(ratio: 1, cap: 10, initial: 0, minimumPerSecond: 0))
        #expect(gate.admit(needsToken: true, now: start) == .budgetEmpty(tokenIn: nil, generation: 0))
        gate.recordFirstAttempt(now: start)
        gate.recordFirstAttempt(now: start)
        #expect(gate.admit(needsToken: true, now: start) == .go(probe: false))
        #expect(gate.admit(needsToken: true, now: start) == .go(probe: false))
        #expect(gate.admit(needsToken: true, now: start) == .budgetEmpty(tokenIn: nil, generation: 0))
    }

    @Test func failuresStillOpenTheCircuitAndAnAnswerStillClearsTheCount() {
        let gate = gate(threshold: 3)
        // Two failures, an answer (clears the count: the gate is quiet again), then two more: still closed.
        gate.requestEnded(.failure, probe: false, now: start)
        gate.requestEnded(.failure, probe: false, now: start)
        gate.requestEnded(.success, probe: false, now: start)
        gate.requestEnded(.failure, probe: false, now: start)
        gate.requestEnded(.failure, probe: false, now: start)
        #expect(gate.phase == .closed)
        #expect(gate.admit(needsToken: false, now: start) == .go(probe: false))
        // The third in a row opens it: a first attempt is held, not let through by the quiet path.
        gate.requestEnded(.failure, probe: false, now: start)
        #expect(gate.phase == .open)
        guard case .hold = gate.admit(needsToken: false, now: start) else {
            Issue.record("a first attempt went while the circuit was open")
            return
        }
        // After the open period the next attempt probes; its answer closes the circuit and the quiet path resumes.
        #expect(gate.admit(needsToken: false, now: start + .seconds(1)) == .go(probe: true))
        gate.requestEnded(.success, probe: true, now: start + .seconds(1))
        #expect(gate.phase == .closed)
        #expect(gate.admit(needsToken: false, now: start + .seconds(1)) == .go(probe: false))
    }
}
