import Testing

@testable import RelayCore

/// The circuit breaker as a pure state machine: every transition, fed events at explicit instants.
@Suite struct CircuitBreakerTests {
    let t0 = ContinuousClock.now
    let settings = CircuitBreaker.Settings(
        failureThreshold: 3, openDelay: .seconds(1), maxOpenDelay: .seconds(4), probeTimeout: .seconds(10))

    /// A breaker that has just opened at `t0` (its first open period: until `t0 + 1 s`).
    func opened() -> CircuitBreaker {
        var breaker = CircuitBreaker(settings: settings)
        _ = breaker.requestEnded(.failure, probe: false, now: t0)
        _ = breaker.requestEnded(.failure, probe: false, now: t0)
        _ = breaker.requestEnded(.failure, probe: false, now: t0)
        return breaker
    }

    /// A breaker half-open since `t0 + 1 s`, its probe in flight.
    func probing() -> CircuitBreaker {
        var breaker = opened()
        _ = breaker.requestReady(now: t0 + .seconds(1))
        return breaker
    }

    // MARK: - Closed

    @Test func closedSendsEverything() {
        var breaker = CircuitBreaker(settings: settings)
        #expect(breaker.phase == .closed)
        #expect(breaker.requestReady(now: t0) == [.send])
        #expect(breaker.requestReady(now: t0) == [.send])
    }

    @Test func closedOpensAfterTheThresholdOfFailuresInARow() {
        var breaker = CircuitBreaker(settings: settings)
        #expect(breaker.requestEnded(.failure, probe: false, now: t0) == [])
        #expect(breaker.requestEnded(.failure, probe: false, now: t0) == [])
        #expect(breaker.phase == .closed)
        #expect(breaker.requestEnded(.failure, probe: false, now: t0) == [.phaseChanged(.open)])
        #expect(breaker.phase == .open)
    }

    @Test func anAnswerClearsTheFailuresOfAClosedCircuit() {
        var breaker = CircuitBreaker(settings: settings)
        _ = breaker.requestEnded(.failure, probe: false, now: t0)
        _ = breaker.requestEnded(.failure, probe: false, now: t0)
        #expect(breaker.requestEnded(.success, probe: false, now: t0) == [])
        #expect(breaker.requestEnded(.failure, probe: false, now: t0) == [])
        #expect(breaker.requestEnded(.failure, probe: false, now: t0) == [])
        #expect(breaker.phase == .closed, "two in a row again, not four")
    }

    @Test func neutralEndsNeitherCountNorClear() {
        var breaker = CircuitBreaker(settings: settings)
        _ = breaker.requestEnded(.failure, probe: false, now: t0)
        _ = breaker.requestEnded(.failure, probe: false, now: t0)
        #expect(breaker.requestEnded(.neutral, probe: false, now: t0) == [])
        #expect(breaker.requestEnded(.failure, probe: false, now: t0) == [.phaseChanged(.open)])
    }

    // MARK: - Open

    @Test func openHoldsUntilItsPeriodEnds() {
        var breaker = opened()
        #expect(breaker.requestReady(now: t0) == [.hold(until: t0 + .seconds(1))])
        #expect(breaker.requestReady(now: t0 + .milliseconds(999)) == [.hold(until: t0 + .seconds(1))])
        #expect(breaker.phase == .open)
    }

    @Test func whatEndsWhileOpenIsIgnored() {
        var breaker = opened()
        #expect(breaker.requestEnded(.success, probe: false, now: t0) == [])
        #expect(breaker.requestEnded(.failure, probe: false, now: t0) == [])
        #expect(breaker.requestEnded(.neutral, probe: false, now: t0) == [])
        #expect(breaker.phase == .open)
    }

    @Test func theFirstRequestAfterTheOpenPeriodIsTheProbe() {
        var breaker = opened()
        #expect(breaker.requestReady(now: t0 + .seconds(1)) == [.phaseChanged(.halfOpen), .probe])
        #expect(breaker.phase == .halfOpen)
    }

    // MARK: - Half-open

    @Test func halfOpenLetsOneProbeAtATime() {
        var breaker = probing()
        let probeEnd = t0 + .seconds(1) + .seconds(10)
        #expect(breaker.requestReady(now: t0 + .seconds(2)) == [.hold(until: probeEnd)])
        #expect(breaker.requestReady(now: t0 + .seconds(3)) == [.hold(until: probeEnd)])
    }

    @Test func aProbeThatAnswersClosesTheCircuit() {
        var breaker = probing()
        #expect(breaker.requestEnded(.success, probe: true, now: t0 + .seconds(2)) == [.phaseChanged(.closed)])
        #expect(breaker.phase == .closed)
        #expect(breaker.requestReady(now: t0 + .seconds(2)) == [.send])
    }

    @Test func aLateAnswerClosesAHalfOpenCircuitToo() {
        var breaker = probing()
        #expect(breaker.requestEnded(.success, probe: false, now: t0 + .seconds(2)) == [.phaseChanged(.closed)])
    }

    @Test func aFailedProbeOpensItAgainForLongerUpToTheMaximum() {
        var breaker = probing()
        #expect(breaker.requestEnded(.failure, probe: true, now: t0 + .seconds(2)) == [.phaseChanged(.open)])
        // The second open period: 2 s.
        #expect(breaker.requestReady(now: t0 + .seconds(3)) == [.hold(until: t0 + .seconds(4))])
        #expect(breaker.requestReady(now: t0 + .seconds(4)) == [.phaseChanged(.halfOpen), .probe])
        #expect(breaker.requestEnded(.failure, probe: true, now: t0 + .seconds(4)) == [.phaseChanged(.open)])
        #expect(breaker.requestReady(now: t0 + .seconds(4)) == [.hold(until: t0 + .seconds(8))])
        #expect(breaker.requestReady(now: t0 + .seconds(8)) == [.phaseChanged(.halfOpen), .probe])
        #expect(breaker.requestEnded(.failure, probe: true, now: t0 + .seconds(8)) == [.phaseChanged(.open)])
        // 8 s would be next; the maximum is 4 s.
        #expect(breaker.requestReady(now: t0 + .seconds(8)) == [.hold(until: t0 + .seconds(12))])
        #expect(
            (1...5).map { breaker.openPeriod($0) } == [.seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4)])
    }

    @Test func aFailureThatIsNotTheProbesChangesNothing() {
        var breaker = probing()
        #expect(breaker.requestEnded(.failure, probe: false, now: t0 + .seconds(2)) == [])
        #expect(breaker.phase == .halfOpen)
    }

    @Test func aProbeWithoutVerdictLetsTheNextRequestProbe() {
        var breaker = probing()
        #expect(breaker.requestEnded(.neutral, probe: true, now: t0 + .seconds(2)) == [.releaseHeld])
        #expect(breaker.phase == .halfOpen)
        #expect(breaker.requestReady(now: t0 + .seconds(2)) == [.probe])
        #expect(breaker.requestEnded(.neutral, probe: false, now: t0 + .seconds(2)) == [], "not the probe's")
    }

    @Test func aProbeWithoutAnEndAfterItsTimeoutLetsAnotherProbe() {
        var breaker = probing()
        #expect(breaker.requestReady(now: t0 + .seconds(11)) == [.probe])
        #expect(breaker.requestReady(now: t0 + .seconds(12)) == [.hold(until: t0 + .seconds(21))])
    }

    @Test func closingForgetsTheOpenPeriodsBefore() {
        var breaker = probing()
        _ = breaker.requestEnded(.failure, probe: true, now: t0 + .seconds(2))
        _ = breaker.requestReady(now: t0 + .seconds(4))
        _ = breaker.requestEnded(.success, probe: true, now: t0 + .seconds(4))
        for _ in 0..<3 { _ = breaker.requestEnded(.failure, probe: false, now: t0 + .seconds(5)) }
        // Open again, for the first period's length.
        #expect(breaker.requestReady(now: t0 + .seconds(5)) == [.hold(until: t0 + .seconds(6))])
    }
}
