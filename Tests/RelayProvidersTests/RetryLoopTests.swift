import Foundation
import Testing

@testable import RelayCore
@testable import RelayProviders

/// The one retry loop under an injected clock, for one message (APNs, FCM) and for batches (Expo): which attempts and
/// back-offs it asks for, and when it stops.
@Suite struct RetryLoopTests {
    static let transient = UpstreamVerdict.retry(
        notBefore: nil,
        freshConnection: false,
        otherwise: .unavailable(reason: "503", retryAfter: nil)
    )
    static let delivered = UpstreamVerdict.final(.delivered(providerMessageID: "x"))
    static let expired = UpstreamVerdict.refreshCredentialAndRetry(
        otherwise: .configurationError(reason: "ExpiredProviderToken"))

    /// What the loop did: its reports, the back-offs it asked for, and each attempt's pending messages and
    /// instructions.
    struct Run {
        var reports: [DeliveryReport]
        var sleeps: [Duration]
        var attempts: [(pending: [Int], instructions: AttemptInstructions)]
    }

    /// Runs the loop over `count` messages; `verdict(message, attempt)` answers for each message at each attempt.
    func loop(
        count: Int = 1,
        policy: RetryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .seconds(1), maxDelay: .seconds(30)),
        budget: RetryBudget = RetryBudget(),
        unit: Double = 1,
        renewableCredential: Bool = true,
        sleepIsCancelled: Bool = false,
        _ verdict: (_ message: Int, _ attempt: Int) -> UpstreamVerdict
    ) async -> Run {
        let sleeper = RecordingSleeper()
        var environment = SenderEnvironment.test(clock: TestClock(), sleeper: sleeper, unit: unit)
        if sleepIsCancelled {
            environment.sleep = { duration in
                try await sleeper.sleep(duration)
                throw CancellationError()
            }
        }
        let retries = RetryLoop(policy: policy, budget: budget)
        var attempts: [(pending: [Int], instructions: AttemptInstructions)] = []
        let reports = await retries.run(
            count: count, renewableCredential: renewableCredential, environment: environment
        ) {
            pending, instructions in
            attempts.append((pending, instructions))
            return pending.map { AttemptResult(verdict: verdict($0, instructions.number), status: 503) }
        }
        return Run(reports: reports, sleeps: sleeper.recorded, attempts: attempts)
    }

    /// Runs the loop over one message whose verdicts come from `verdicts`, the last repeating.
    func loop(
        _ verdicts: [UpstreamVerdict],
        budget: RetryBudget = RetryBudget(),
        unit: Double = 1
    ) async -> Run {
        await loop(budget: budget, unit: unit) { _, attempt in verdicts[min(attempt - 1, verdicts.count - 1)] }
    }

    // MARK: - One message

    @Test func transientFailuresBackOffExponentiallyThenSucceed() async {
        let run = await loop([Self.transient, Self.transient, Self.delivered])
        #expect(run.reports.map(\.outcome) == [.delivered(providerMessageID: "x")])
        #expect(run.reports.map(\.attempts) == [3])
        #expect(run.sleeps == [.seconds(1), .seconds(2)])
    }

    @Test func jitterScalesTheBackOff() async {
        let run = await loop([Self.transient, Self.transient, Self.delivered], unit: 0.25)
        #expect(run.sleeps == [.milliseconds(250), .milliseconds(500)])
    }

    @Test func attemptsAreBoundedAndTheFallbackOutcomeIsReported() async {
        let run = await loop([Self.transient])
        #expect(run.reports.map(\.attempts) == [3])
        #expect(run.reports.map(\.outcome) == [.unavailable(reason: "503", retryAfter: nil)])
        #expect(run.reports.map(\.upstreamStatus) == [503])
        #expect(run.sleeps.count == 2)
    }

    @Test func retryAfterIsHonoured() async {
        let throttled = UpstreamVerdict.retry(
            notBefore: .seconds(60),
            freshConnection: false,
            otherwise: .unavailable(reason: "QUOTA_EXCEEDED", retryAfter: .seconds(60))
        )
        let run = await loop([throttled, Self.delivered], unit: 0.1)
        #expect(run.sleeps == [.seconds(60)])
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

    @Test func spentBudgetStopsRetries() async {
        let run = await loop([Self.transient], budget: RetryBudget(ratio: 0, cap: 10, initial: 0))
        #expect(run.reports.map(\.attempts) == [1])
        #expect(run.sleeps.isEmpty)
        #expect(run.reports.map(\.outcome) == [.unavailable(reason: "503", retryAfter: nil)])
    }

    @Test func finalOutcomesAreNeverRetried() async {
        let dead = UpstreamVerdict.final(.tokenInvalid(.deviceNotRegistered, reason: "Unregistered", since: nil))
        let run = await loop([dead])
        #expect(run.reports.map(\.attempts) == [1])
        #expect(run.sleeps.isEmpty)
        #expect(run.reports.map(\.outcome.removeToken) == [true])
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

    @Test func eachMessageFillsTheBudgetAndEachRetrySpendsIt() async {
        // Two first attempts deposit 0.5 each: one token, for the first message asking; the second gets its fallback.
        let run = await loop(count: 2, budget: RetryBudget(ratio: 0.5, cap: 10, initial: 0)) { _, attempt in
            attempt == 1 ? Self.transient : Self.delivered
        }
        #expect(run.attempts.map(\.pending) == [[0, 1], [0]])
        #expect(run.reports.map(\.outcome.shortDescription) == ["delivered", "unavailable"])
        #expect(run.reports.map(\.attempts) == [2, 1])
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
        #expect(run.reports.map(\.upstreamStatus) == [503, 503, 503])
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
}
