import Foundation
import Metrics
import MetricsTestKit
import Testing

@testable import RelayCore
@testable import RelayProviders

/// The one retry loop on a test clock, for one message (APNs, FCM) and for batches (Expo): which attempts and waits it
/// asks for, when its deadlines end it, and how its upstream's gate (circuit breaker, retry budget) holds it.
@Suite struct RetryLoopTests {
    static let transient = UpstreamVerdict.retry(
        notBefore: nil,
        freshConnection: false,
        otherwise: .unavailable(reason: "503", retryAfter: nil)
    )
    static let delivered = UpstreamVerdict.final(.delivered(providerMessageID: "x"))
    static let expired = UpstreamVerdict.refreshCredentialAndRetry(
        otherwise: .configurationError(reason: "ExpiredProviderToken"))
    static let policy = RetryPolicy(baseDelay: .seconds(1), maxDelay: .seconds(30), window: .seconds(300))

    /// Stands for an upstream endpoint: the identity its gate is kept under.
    final class Upstream: Sendable {}

    /// What the loop did: its reports, every wait it asked for (back-offs, holds, budget waits), each attempt's
    /// pending messages and instructions, how far the test clock was moved (by the waits the loop asked for; nothing
    /// here reads real time, so no figure is a speed), and the circuit's phase at the end.
    struct Run {
        var reports: [DeliveryReport]
        var sleeps: [Duration]
        var attempts: [(pending: [Int], instructions: AttemptInstructions)]
        var clockAdvanced: Duration
        var phase: CircuitBreaker.Phase
    }

    /// The status an upstream would have answered with for `verdict`.
    static func status(_ verdict: UpstreamVerdict) -> Int {
        switch verdict {
        case .final(.delivered): 200
        case .final: 400
        case .refreshCredentialAndRetry: 403
        case .retry: 503
        }
    }

    /// Runs the loop over `count` messages; `verdict(message, attempt)` answers for each message at each attempt.
    ///
    /// - Parameters:
    ///   - lifetimes: each message's lifetime (its `ttl`); the window when absent or `nil`.
    ///   - prepare: runs on the gate before the loop, at the clock's start.
    func loop(
        count: Int = 1,
        policy: RetryPolicy = RetryLoopTests.policy,
        budget: RetryBudget = RetryBudget(),
        breaker: CircuitBreaker.Settings = .init(),
        lifetimes: [Duration?] = [],
        critical: Bool = false,
        unit: Double = 1,
        renewableCredential: Bool = true,
        sleepIsCancelled: Bool = false,
        prepare: (UpstreamGate, ContinuousClock.Instant) -> Void = { _, _ in },
        _ verdict: (_ message: Int, _ attempt: Int) -> UpstreamVerdict
    ) async -> Run {
        let clock = TestClock()
        let sleeper = RecordingSleeper()
        var environment = SenderEnvironment.test(clock: clock, sleeper: sleeper, unit: unit)
        if sleepIsCancelled {
            environment.sleep = { duration in
                try await sleeper.sleep(duration)
                throw CancellationError()
            }
        }
        let retries = RetryLoop(policy: policy, budget: budget, breaker: breaker)
        let upstream = Upstream()
        let gate = retries.gate(for: ObjectIdentifier(upstream), provider: .apns)
        let start = clock.instant
        prepare(gate, start)
        let terms = (0..<count).map { index in
            let lifetime = index < lifetimes.count ? lifetimes[index] ?? policy.window : policy.window
            return RetryLoop.Terms(deadline: start + lifetime, critical: critical)
        }
        var attempts: [(pending: [Int], instructions: AttemptInstructions)] = []
        let reports = await retries.run(
            terms: terms, renewableCredential: renewableCredential, gate: gate, environment: environment
        ) { pending, instructions in
            attempts.append((Array(pending), instructions))
            return pending.map { message in
                let verdict = verdict(message, instructions.number)
                return AttemptResult(verdict: verdict, status: Self.status(verdict))
            }
        }
        return Run(
            reports: reports, sleeps: sleeper.recorded, attempts: attempts, clockAdvanced: clock.instant - start,
            phase: gate.phase)
    }

    /// Runs the loop over one message whose verdicts come from `verdicts`, the last repeating.
    func loop(
        _ verdicts: [UpstreamVerdict],
        budget: RetryBudget = RetryBudget(),
        lifetime: Duration? = nil,
        unit: Double = 1
    ) async -> Run {
        await loop(budget: budget, lifetimes: [lifetime], unit: unit) { _, attempt in
            verdicts[min(attempt - 1, verdicts.count - 1)]
        }
    }

    // MARK: - One message

    @Test func transientFailuresBackOffExponentiallyThenSucceed() async {
        let run = await loop([Self.transient, Self.transient, Self.delivered])
        #expect(run.reports.map(\.outcome) == [.delivered(providerMessageID: "x")])
        #expect(run.reports.map(\.attempts) == [3])
        #expect(run.sleeps == [.seconds(1), .seconds(2)])
        #expect(run.reports.map(\.latency) == [.seconds(3)])
    }

    @Test func jitterScalesTheBackOff() async {
        let run = await loop([Self.transient, Self.transient, Self.delivered], unit: 0.25)
        #expect(run.sleeps == [.milliseconds(250), .milliseconds(500)])
    }

    @Test func anOutageLongerThanThreeAttemptsDelaysTheMessageAndItIsDeliveredAfterwards() async {
        // Eight failures: 1 + 2 + 4 + … + 30 s of back-off, far beyond the three attempts (1 s and 2 s) of old.
        let run = await loop(Array(repeating: Self.transient, count: 8) + [Self.delivered])
        #expect(run.reports.map(\.outcome) == [.delivered(providerMessageID: "x")])
        #expect(run.reports.map(\.attempts) == [9])
        #expect(run.sleeps == [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
        #expect(run.phase == .closed)
    }

    @Test func transientFailuresGoOnUntilTheDeadlineThenReportTheFallback() async {
        let run = await loop([Self.transient], lifetime: .seconds(60))
        // 1 + 2 + 4 + 8 + 16 = 31 s; the next back-off (30 s) is cut to 29 s, so that the last attempt is made at the
        // 60 s deadline; then the fallback is reported.
        #expect(run.sleeps == [1, 2, 4, 8, 16, 29].map { Duration.seconds($0) })
        #expect(run.reports.map(\.attempts) == [7])
        #expect(run.reports.map(\.outcome) == [.unavailable(reason: "503", retryAfter: nil)])
        #expect(run.reports.map(\.upstreamStatus) == [503])
        #expect(run.reports.map(\.latency) == [.seconds(60)])
    }

    @Test func aNotificationWithAShortTTLEndsAtItsTTL() async {
        let run = await loop([Self.transient], lifetime: .seconds(10))
        #expect(run.sleeps == [1, 2, 4, 3].map { Duration.seconds($0) })
        #expect(run.reports.map(\.attempts) == [5])
        #expect(run.reports.map(\.outcome.shortDescription) == ["unavailable"])
        #expect(run.clockAdvanced == .seconds(10))
    }

    @Test func aLifetimeOfZeroGetsItsOneAttempt() async {
        let once = await loop([Self.transient], lifetime: .zero)
        #expect(once.reports.map(\.attempts) == [1])
        #expect(once.sleeps.isEmpty)
        let delivered = await loop([Self.delivered], lifetime: .zero)
        #expect(delivered.reports.map(\.outcome) == [.delivered(providerMessageID: "x")])
    }

    @Test func retryAfterIsHonoured() async {
        let throttled = UpstreamVerdict.retry(
            notBefore: .seconds(60),
            freshConnection: false,
            otherwise: .unavailable(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))
        )
        let run = await loop([throttled, Self.delivered], unit: 0.1)
        #expect(run.sleeps == [.seconds(60)])
        #expect(run.reports.map(\.attempts) == [2])
    }

    @Test func aRetryAfterBeyondTheDeadlineEndsTheRetriesAtOnceWithTheHint() async {
        let throttled = UpstreamVerdict.retry(
            notBefore: .seconds(600),
            freshConnection: false,
            otherwise: .unavailable(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(600))
        )
        let run = await loop([throttled, Self.delivered])
        #expect(run.sleeps.isEmpty)
        #expect(run.reports.map(\.outcome) == [.unavailable(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(600))])
    }

    @Test func freshConnectionIsAskedForWhenTheReasonCallsForIt() async {
        let shutdown = UpstreamVerdict.retry(
            notBefore: nil,
            freshConnection: true,
            otherwise: .unavailable(reason: "Shutdown", retryAfter: nil)
        )
        let run = await loop([shutdown, Self.transient, Self.delivered])
        #expect(run.attempts.map(\.instructions.freshConnection) == [false, true, false])
    }

    @Test func expiredCredentialIsRenewedOnceWithoutBackOff() async {
        let run = await loop([Self.expired, Self.expired, Self.expired])
        #expect(run.attempts.map(\.instructions.renewCredential) == [false, true])
        #expect(run.reports.map(\.outcome) == [.configurationError(reason: "ExpiredProviderToken")])
        #expect(run.reports.map(\.attempts) == [2])
        #expect(run.sleeps.isEmpty)
    }

    @Test func finalOutcomesAreNeverRetried() async {
        let dead = UpstreamVerdict.final(.tokenInvalid(.deviceNotRegistered, reason: "Unregistered", since: nil))
        let run = await loop([dead])
        #expect(run.reports.map(\.attempts) == [1])
        #expect(run.sleeps.isEmpty)
        #expect(run.reports.map(\.outcome.removeToken) == [true])
    }

    // MARK: - The retry budget

    @Test func anEmptyBudgetDelaysARetryUntilATokenArrives() async {
        // No tokens but one every 4 s: after its 1 s back-off the retry waits 3 s more for one, then goes.
        let budget = RetryBudget(ratio: 0, cap: 10, initial: 0, minimumPerSecond: 0.25)
        let run = await loop([Self.transient, Self.delivered], budget: budget)
        #expect(run.reports.map(\.outcome) == [.delivered(providerMessageID: "x")])
        #expect(run.reports.map(\.attempts) == [2])
        #expect(run.sleeps == [.seconds(1), .seconds(3)])
    }

    @Test func theBudgetNeverFailsANotificationItDelaysItToItsDeadline() async {
        // A budget that never refills: the retry waits for a token until its deadline, and only the deadline ends it.
        let budget = RetryBudget(ratio: 0, cap: 10, initial: 0, minimumPerSecond: 0)
        let run = await loop([Self.transient, Self.delivered], budget: budget, lifetime: .seconds(60))
        #expect(run.reports.map(\.attempts) == [1])
        #expect(run.reports.map(\.outcome) == [.unavailable(reason: "503", retryAfter: nil)])
        #expect(run.clockAdvanced == .seconds(60))
        #expect(run.sleeps.count > 2, "back-off, then waits for the budget")
    }

    @Test func criticalAlertsTakeNoTokenFromTheBudget() async {
        let budget = RetryBudget(ratio: 0, cap: 10, initial: 0, minimumPerSecond: 0)
        let run = await loop(budget: budget, critical: true) { _, attempt in
            attempt < 3 ? Self.transient : Self.delivered
        }
        #expect(run.reports.map(\.outcome) == [.delivered(providerMessageID: "x")])
        #expect(run.sleeps == [.seconds(1), .seconds(2)])
    }

    @Test func aBatchRetryTakesOneToken() async {
        // One token: the three messages that failed go again together, in one attempt.
        let budget = RetryBudget(ratio: 0, cap: 10, initial: 1, minimumPerSecond: 0)
        let run = await loop(count: 3, budget: budget) { _, attempt in
            attempt == 1 ? Self.transient : Self.delivered
        }
        #expect(run.attempts.map(\.pending) == [[0, 1, 2], [0, 1, 2]])
        #expect(run.reports.map(\.attempts) == [2, 2, 2])
    }

    // MARK: - The circuit breaker

    @Test func anOpenCircuitHoldsTheMessageAndItsProbesBackOffUntilOneSucceeds() async {
        // No back-off (jitter 0): the third failure in a row opens the circuit for 10 s; each failed probe doubles it.
        let breaker = CircuitBreaker.Settings(failureThreshold: 3, openDelay: .seconds(10), maxOpenDelay: .seconds(60))
        let run = await loop(breaker: breaker, unit: 0) { _, attempt in
            attempt <= 5 ? Self.transient : Self.delivered
        }
        #expect(run.reports.map(\.outcome) == [.delivered(providerMessageID: "x")])
        #expect(run.reports.map(\.attempts) == [6])
        // Attempts 1–3 back off 0 s; then the holds: 10 s before probe 4, 20 s before probe 5, 40 s before probe 6.
        #expect(run.sleeps.filter { $0 > .zero } == [.seconds(10), .seconds(20), .seconds(40)])
        #expect(run.clockAdvanced == .seconds(70))
        #expect(run.phase == .closed)
    }

    @Test func aMessageHeldFromItsFirstAttemptEndsAtItsDeadlineNeverSent() async {
        let breaker = CircuitBreaker.Settings(failureThreshold: 1, openDelay: .seconds(30))
        let run = await loop(breaker: breaker, lifetimes: [.seconds(5)]) { gate, now in
            gate.requestEnded(.failure, probe: false, now: now)
        } _: { _, _ in
            Self.delivered
        }
        #expect(run.attempts.isEmpty)
        #expect(run.reports.map(\.outcome) == [RetryLoop.heldUntilDeadline])
        #expect(run.reports.map(\.attempts) == [0])
        #expect(run.reports.map(\.outcome.errorCode) == ["ProviderUnavailable"])
        #expect(run.clockAdvanced == .seconds(5))
        #expect(run.phase == .open)
    }

    @Test func aHeldRetryNeedsNoTokenWhenTheCircuitCloses() async {
        // An empty budget that never refills, and a circuit that opens on the first failure: the retry is held, goes
        // as the probe, and is delivered without a token.
        let budget = RetryBudget(ratio: 0, cap: 10, initial: 0, minimumPerSecond: 0)
        let breaker = CircuitBreaker.Settings(failureThreshold: 1, openDelay: .seconds(5))
        let run = await loop(budget: budget, breaker: breaker, unit: 0) { _, attempt in
            attempt == 1 ? Self.transient : Self.delivered
        }
        #expect(run.reports.map(\.outcome) == [.delivered(providerMessageID: "x")])
        #expect(run.phase == .closed)
    }

    // MARK: - Batches

    @Test func aBatchResendsOnlyTheMessagesWhoseVerdictsAskedForIt() async {
        let run = await loop(count: 3) { message, attempt in
            switch message {
            case 1: attempt == 1 ? Self.transient : Self.delivered
            case 2: .final(.tokenInvalid(.deviceNotRegistered, reason: "DeviceNotRegistered", since: nil))
            default: Self.delivered
            }
        }
        #expect(run.attempts.map(\.pending) == [[0, 1, 2], [1]])
        #expect(run.reports.map(\.attempts) == [1, 2, 1])
        #expect(run.reports.map(\.outcome.shortDescription) == ["delivered", "delivered", "token_invalid"])
        #expect(run.sleeps == [.seconds(1)])
    }

    @Test func aRoundBacksOffOnceForAtLeastTheLongestWaitAsked() async {
        let run = await loop(count: 3, unit: 0.1) { message, attempt in
            guard attempt == 1 else { return Self.delivered }
            let wait: Duration? = [.seconds(5), .seconds(60), nil][message]
            return .retry(
                notBefore: wait, freshConnection: false, otherwise: .unavailable(reason: "429", retryAfter: wait))
        }
        #expect(run.sleeps == [.seconds(60)])
        #expect(run.reports.map(\.attempts) == [2, 2, 2])
    }

    @Test func eachMessageOfABatchEndsAtItsOwnDeadline() async {
        let run = await loop(count: 2, lifetimes: [.seconds(5), nil]) { _, attempt in
            attempt < 5 ? Self.transient : Self.delivered
        }
        // 1 + 2 s of back-off; the third (4 s) is cut to 2 s for the first message's last attempt, at its 5 s
        // deadline; the second goes on alone.
        #expect(run.attempts.map(\.pending) == [[0, 1], [0, 1], [0, 1], [0, 1], [1]])
        #expect(run.sleeps == [1, 2, 2, 8].map { Duration.seconds($0) })
        #expect(run.reports.map(\.outcome.shortDescription) == ["unavailable", "delivered"])
        #expect(run.reports.map(\.attempts) == [4, 5])
    }

    @Test func aCancelledBackOffReportsEachWaitingMessagesFallback() async {
        let run = await loop(count: 3, sleepIsCancelled: true) { message, _ in
            message == 0 ? Self.delivered : Self.transient
        }
        #expect(run.attempts.count == 1)
        #expect(run.sleeps.count == 1)
        #expect(
            run.reports.map(\.outcome) == [
                .delivered(providerMessageID: "x"), .unavailable(reason: "503", retryAfter: nil),
                .unavailable(reason: "503", retryAfter: nil),
            ])
        #expect(run.reports.map(\.attempts) == [1, 1, 1])
        #expect(run.reports.map(\.upstreamStatus) == [200, 503, 503])
    }

    @Test func withoutACredentialToRenewARefusalIsFinal() async {
        let run = await loop(count: 2, renewableCredential: false) { _, _ in Self.expired }
        #expect(run.attempts.count == 1)
        #expect(
            run.reports.map(\.outcome)
                == Array(repeating: .configurationError(reason: "ExpiredProviderToken"), count: 2))
    }

    @Test func aBatchRenewsItsCredentialOnceForAllItsMessages() async {
        let run = await loop(count: 2) { _, _ in Self.expired }
        #expect(run.attempts.map(\.pending) == [[0, 1], [0, 1]])
        #expect(run.attempts.map(\.instructions.renewCredential) == [false, true])
        #expect(run.reports.map(\.attempts) == [2, 2])
        #expect(run.sleeps.isEmpty)
    }

    @Test func theNextAttemptCarriesWhatAnyOfItsMessagesAskedFor() async {
        let shutdown = UpstreamVerdict.retry(
            notBefore: nil,
            freshConnection: true,
            otherwise: .unavailable(reason: "Shutdown", retryAfter: nil)
        )
        let run = await loop(count: 3) { message, attempt in
            guard attempt == 1 else { return Self.delivered }
            return [Self.expired, Self.transient, shutdown][message]
        }
        #expect(run.attempts.map(\.pending) == [[0, 1, 2], [0, 1, 2]])
        #expect(
            run.attempts.last?.instructions
                == AttemptInstructions(number: 2, freshConnection: true, renewCredential: true))
        // The retried messages back off once; the renewal waits with them.
        #expect(run.sleeps == [.seconds(1)])
        #expect(run.reports.map(\.attempts) == [2, 2, 2])
    }

    // MARK: - Metrics

    @Test func retriesAreCountedByCauseAndTheCircuitStateIsPublished() async throws {
        let metrics = TestMetrics()
        try await withMetricsFactory(metrics) {
            let breaker = CircuitBreaker.Settings(failureThreshold: 2, openDelay: .seconds(5))
            let run = await loop(count: 2, breaker: breaker, unit: 0) { message, attempt in
                switch (message, attempt) {
                case (_, 1), (_, 2): Self.transient
                case (0, 3): Self.expired
                default: Self.delivered
                }
            }
            #expect(run.reports.map(\.outcome.shortDescription) == ["delivered", "delivered"])
            #expect(run.reports.map(\.attempts) == [4, 3])
            func retries(_ cause: String) -> Int64 {
                metrics.counterTotal(
                    label: "relay_upstream_retries_total", dimensions: [("provider", "apns"), ("cause", cause)])
            }
            #expect(retries("server_error") == 4)
            #expect(retries("credential") == 1)
            let state = try metrics.expectGauge("relay_upstream_circuit_state", [("provider", "apns")])
            // Opened after the two failures, probed, closed.
            #expect(state.values == [0, 2, 1, 0])
        }
    }
}
