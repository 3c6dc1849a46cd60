import Metrics
package import RelayCore
import Synchronization

/// The one retry loop of every sender: its provider's retry policy, and the gates (circuit breaker and retry budget)
/// of the upstreams it sends to.
///
/// ### Overview
/// A send hands the loop its messages (one for APNs and FCM, a batch for Expo) with each one's terms (deadline,
/// criticality), the gate of the upstream they go to, and a function that makes one attempt for the messages still
/// pending: it sends them and returns each one's classified answer. The loop runs attempts until every message has its
/// outcome. A transient failure delays a message, it does not fail it: it goes again after a back-off for as long as
/// its deadline allows (``RetryPolicy/deadline(start:ttl:expiration:date:)``), and only then reports its fallback
/// outcome (`ProviderUnavailable`, or `MessageRateExceeded` for a device over its rate).
///
/// ### Implementation
/// Each round has three steps.
/// 1. **Admission** (``UpstreamGate/admit(needsToken:now:)``). While the upstream's circuit is open the messages are
///    held, not failed, until the probe succeeds (then they all go at once) or their deadlines pass; the first to ask
///    after the open period goes as the probe. A retry of a transient failure takes a token from the upstream's
///    retry budget while the circuit is closed; when there is none it waits for one (or for the circuit to open),
///    also until its deadline. Critical alerts, first attempts, renewals and sends that were held need no token.
///    A message whose deadline passes while it waits reports its fallback, or, if it was never sent, "circuit
///    open: not sent before the deadline".
/// 2. **The attempt**, whose outcome tells the circuit breaker whether the upstream answered
///    (``AttemptResult/signal``).
/// 3. **Judgement** of each pending message on its own verdict:
///    - ``UpstreamVerdict/final(_:)``: its outcome is reported.
///    - ``UpstreamVerdict/retry(notBefore:freshConnection:otherwise:)``: it goes again after the round's back-off,
///      cut short so that it starts by its deadline (one last attempt at the deadline beats giving up early); once
///      the deadline has come, or when the upstream's `Retry-After` ends after it, its `otherwise` is reported (with
///      that `Retry-After`).
///    - ``UpstreamVerdict/refreshCredentialAndRetry(otherwise:)``: it goes again at once with a renewed credential, if
///      the sender has one to renew and no credential was renewed yet in this send; else its `otherwise` is
///      reported. A credential refused again right after renewal is the operator's problem (clock, key).
///
/// The messages that go again go together: after one back-off (full jitter, drawn once, and at least the longest
/// `notBefore` among them) when any of them is retried, on a fresh connection when any asked for one, with a renewed
/// credential when any asked for that. Each message that goes again counts in `relay_upstream_retries_total` with
/// its ``RetryCause``. A cancelled wait reports each waiting message's fallback. Streams the upstream did not process
/// (REFUSED_STREAM, above a GOAWAY's last stream id) never reach the loop: the pool sends them again without counting
/// an attempt.
///
/// An attempt that was sent and got no answer within `[upstream] timeout_ms` (``AttemptResult/timedOutAfterSending``)
/// may have been delivered: sending it again risks a duplicate on the device. Each one counts in
/// `relay_upstream_timeouts_total`, and a message goes again after at most ``maxAttemptsAfterTimeout`` of them (the
/// same message, with the same `apns-id`, after the usual back-off and within its deadline); the next one ends it
/// with ``noAnswer``. A request that timed out queued, a connection that could not be made and a refused stream were
/// never received: they are retried until the deadline as before.
package final class RetryLoop: Sendable {
    package let policy: RetryPolicy
    /// The retry budget each upstream's gate starts with.
    package let budget: RetryBudget
    /// The circuit breaker settings of each upstream's gate.
    package let breaker: CircuitBreaker.Settings
    /// How many times a message goes again after attempts that timed out once sent (`[upstream]
    /// max_attempts_after_timeout`); 0 ends it at its first such timeout.
    package let maxAttemptsAfterTimeout: Int
    private let upstreams = Mutex<Upstreams>(Upstreams())

    private struct Upstreams {
        var gates: [ObjectIdentifier: UpstreamGate] = [:]
        var boards: [Provider: CircuitBoard] = [:]
    }

    package init(
        policy: RetryPolicy = .init(),
        budget: RetryBudget = .init(),
        breaker: CircuitBreaker.Settings = .init(),
        maxAttemptsAfterTimeout: Int = RetryLoop.defaultMaxAttemptsAfterTimeout
    ) {
        self.policy = policy
        self.budget = budget
        self.breaker = breaker
        self.maxAttemptsAfterTimeout = max(maxAttemptsAfterTimeout, 0)
    }

    /// `[upstream] max_attempts_after_timeout` when it is not set.
    package static let defaultMaxAttemptsAfterTimeout = 1

    /// The gate of the upstream `upstream` names (an ``UpstreamEndpoint``'s identity), made on first use.
    func gate(for upstream: ObjectIdentifier, provider: Provider) -> UpstreamGate {
        upstreams.withLock { upstreams in
            if let gate = upstreams.gates[upstream] { return gate }
            let board = upstreams.boards[provider] ?? CircuitBoard(provider: provider)
            upstreams.boards[provider] = board
            let gate = UpstreamGate(provider: provider, breaker: breaker, budget: budget, board: board)
            upstreams.gates[upstream] = gate
            return gate
        }
    }

    /// The most open circuit phase among `provider`'s upstreams (what `relay_upstream_circuit_state` shows).
    package func circuitPhase(of provider: Provider) -> CircuitBreaker.Phase {
        upstreams.withLock { $0.boards[provider] }?.phase ?? .closed
    }

    /// What bounds one message's retries.
    struct Terms: Sendable, Equatable {
        /// No attempt starts after this instant (``RetryPolicy/deadline(start:ttl:expiration:date:)``).
        var deadline: ContinuousClock.Instant
        /// A critical alert takes no token from the retry budget.
        var critical: Bool
    }

    /// What a message that never had its outcome reports; the loop reports on every message, so this stays unseen.
    private static let notSent = DeliveryReport(outcome: .unavailable(reason: "not sent", retryAfter: nil), attempts: 0)
    /// What a message held from its first attempt until its deadline reports.
    static let heldUntilDeadline = DeliveryOutcome.unavailable(
        reason: "circuit open: not sent before the deadline", retryAfter: nil)
    /// What a message reports when its attempts timed out once sent more often than ``maxAttemptsAfterTimeout``
    /// allows another.
    static let noAnswer = DeliveryOutcome.unavailable(
        reason: "timeout: the provider did not answer in time; the notification may or may not have been delivered",
        retryAfter: nil)

    /// Runs attempts for the messages until each has its outcome.
    ///
    /// - Parameters:
    ///   - terms: each message's deadline and criticality, in order.
    ///   - renewableCredential: whether the sender has a credential to renew when a verdict asks for it.
    ///   - gate: the gate of the upstream every message goes to.
    ///   - attempt: sends the messages at the given indices (in increasing order) as `instructions` say and returns
    ///     one result per message, in the same order.
    /// - Returns: one report per message, in order.
    func run(
        terms: [Terms],
        renewableCredential: Bool,
        gate: UpstreamGate,
        environment: SenderEnvironment,
        attempt: (_ pending: PendingIndices, _ instructions: AttemptInstructions) async -> [AttemptResult]
    ) async -> [DeliveryReport] {
        // Only what must outlive a suspension lives here; each attempt is judged by the synchronous `judge`, whose
        // temporaries stay on the thread's stack instead of growing every send's async frame.
        var state = State(terms: terms, renewableCredential: renewableCredential, started: environment.instant())
        gate.recordFirstAttempt(now: state.started)
        await loop(&state, gate: gate, environment: environment, attempt: attempt)
        return state.finalReports
    }

    /// Goes on with one message whose first attempt was made outside the loop (``ProviderSender``'s first attempt
    /// for the pushes of one relay request): as ``run(terms:renewableCredential:gate:environment:attempt:)`` would
    /// after that attempt, from judging its `first` result on.
    ///
    /// The caller did for that attempt what the loop does for each of its own: it was admitted with the gate quiet
    /// (``UpstreamGate/isQuiet``), counted as a first attempt, and its signal was reported
    /// (``UpstreamGate/requestEnded(_:probe:now:)``).
    ///
    /// - Parameter started: when the first attempt began; the report's latency counts from it.
    /// - Returns: the message's report.
    func resume(
        after first: AttemptResult,
        started: ContinuousClock.Instant,
        terms: Terms,
        renewableCredential: Bool,
        gate: UpstreamGate,
        environment: SenderEnvironment,
        attempt: (_ pending: PendingIndices, _ instructions: AttemptInstructions) async -> [AttemptResult]
    ) async -> DeliveryReport {
        var state = State(terms: [terms], renewableCredential: renewableCredential, started: started)
        if await conclude([first], &state, gate: gate, environment: environment) {
            await loop(&state, gate: gate, environment: environment, attempt: attempt)
        }
        return state.finalReports[0]
    }

    /// Runs attempts until every pending message has its outcome.
    private func loop(
        _ state: inout State,
        gate: UpstreamGate,
        environment: SenderEnvironment,
        attempt: (_ pending: PendingIndices, _ instructions: AttemptInstructions) async -> [AttemptResult]
    ) async {
        while !state.pending.isEmpty {
            guard await admit(&state, gate: gate, environment: environment) else { return }
            let results = await attempt(state.pending, state.instructions)
            gate.requestEnded(Self.signal(of: results), probe: state.probe, now: environment.instant())
            guard await conclude(results, &state, gate: gate, environment: environment) else { return }
        }
    }

    /// Judges an attempt's results, waits out the back-off before the next attempt and moves on to it.
    ///
    /// - Returns: `false` when the back-off was cancelled (each waiting message reported).
    private func conclude(
        _ results: [AttemptResult],
        _ state: inout State,
        gate: UpstreamGate,
        environment: SenderEnvironment
    ) async -> Bool {
        let delay = judge(results, &state, now: environment.instant(), random: environment.random)
        count(state.retries, provider: gate.provider)
        if state.timedOut > 0 {
            Counter(label: "relay_upstream_timeouts_total", dimensions: [("provider", gate.provider.rawValue)])
                .increment(by: state.timedOut)
            state.timedOut = 0
        }
        if let delay {
            do {
                try await environment.sleep(delay)
            } catch {
                state.reportWaiting(now: environment.instant())
                return false
            }
        }
        state.next()
        return true
    }

    /// Waits until the pending messages may go, reporting those whose deadline passes meanwhile.
    ///
    /// - Returns: `false` when none is left to send, or the wait was cancelled (each waiting message reported).
    private func admit(_ state: inout State, gate: UpstreamGate, environment: SenderEnvironment) async -> Bool {
        var budgetWaits = 0
        while true {
            let now = environment.instant()
            // An attempt that was scheduled (the first, or a retry whose back-off `judge` fitted before the deadline)
            // goes if it may; one that had to wait here is given up at its deadline.
            if state.held || budgetWaits > 0 { state.expire(now: now) }
            guard let deadline = state.earliestDeadline else { return false }
            let needsToken = state.retrying && !state.held && !state.pending.allSatisfy { state.terms[$0].critical }
            switch gate.admit(needsToken: needsToken, now: now) {
            case .go(let probe):
                state.probe = probe
                return true
            case .hold(let until, let generation):
                state.held = true
                await gate.wait(until: min(until, deadline), after: generation, environment: environment)
            case .budgetEmpty(let tokenIn, let generation):
                budgetWaits += 1
                let delay = policy.delay(after: budgetWaits, notBefore: tokenIn, unit: environment.random())
                await gate.wait(until: min(now + delay, deadline), after: generation, environment: environment)
            }
            if Task.isCancelled {
                state.reportWaiting(now: environment.instant())
                return false
            }
        }
    }

    /// What one attempt showed about the upstream: an answer for any message shows it is up.
    static func signal(of results: [AttemptResult]) -> CircuitBreaker.Signal {
        var signal = CircuitBreaker.Signal.neutral
        for result in results {
            switch result.signal {
            case .success: return .success
            case .failure: signal = .failure
            case .neutral: continue
            }
        }
        return signal
    }

    /// The loop's state between attempts.
    ///
    /// A push to APNs or FCM is a send of one message, so this state lives as long as the push is in flight, for
    /// each of the thousands in flight at once: what a send of one message does not need is not allocated (the
    /// reports when the first is known, the fallbacks when a message is retried, the pending indices while they are
    /// all of them). `relay-bench relay`, batched phase: with these allocated up front the relay's peak RSS was about
    /// 5 MB higher at 20,000 pushes in flight.
    struct State {
        let started: ContinuousClock.Instant
        let renewableCredential: Bool
        let terms: [Terms]
        /// Each message's report, in order; empty until the first is known.
        private var reports: [DeliveryReport] = []
        /// The messages the next attempt sends, in increasing order.
        var pending: PendingIndices
        var instructions = AttemptInstructions(number: 1, freshConnection: false, renewCredential: false)
        /// Whether the credential was renewed in this send.
        var renewed = false
        /// Whether the attempt being admitted retries a transient failure (it needs a budget token).
        var retrying = false
        /// Whether the attempt being admitted was held by the circuit (it then needs no token).
        var held = false
        /// Whether the attempt went as the circuit's probe.
        var probe = false
        /// Each message's fallback: the outcome it reports if it gets no further attempt, and the result behind it.
        var fallbacks: [Int: (otherwise: DeliveryOutcome, result: AttemptResult)] = [:]
        /// The messages that go again.
        var waiting: [Int] = []
        /// Why each message of `waiting` goes again, for the retries metric.
        var retries: [RetryCause] = []
        /// How many of each message's attempts timed out once sent; empty until one does.
        var timeouts: [Int: Int] = [:]
        /// The attempts of the last round that timed out once sent, for `relay_upstream_timeouts_total`.
        var timedOut = 0
        var following = AttemptInstructions(number: 2, freshConnection: false, renewCredential: false)

        init(terms: [Terms], renewableCredential: Bool, started: ContinuousClock.Instant) {
            self.started = started
            self.terms = terms
            self.renewableCredential = renewableCredential
            self.pending = PendingIndices(all: terms.count)
        }

        /// Every message's report, in order.
        var finalReports: [DeliveryReport] {
            reports.isEmpty ? Array(repeating: RetryLoop.notSent, count: terms.count) : reports
        }

        /// The earliest deadline among the pending messages; `nil` when none is pending.
        var earliestDeadline: ContinuousClock.Instant? {
            pending.lazy.map { terms[$0].deadline }.min()
        }

        mutating func report(
            _ index: Int,
            _ outcome: DeliveryOutcome,
            _ result: AttemptResult?,
            attempts: Int,
            now: ContinuousClock.Instant
        ) {
            if reports.isEmpty { reports = Array(repeating: RetryLoop.notSent, count: terms.count) }
            reports[index] = DeliveryReport(
                outcome: outcome,
                attempts: attempts,
                upstreamStatus: result?.status,
                upstreamReason: result?.reason,
                latency: now - started
            )
        }

        /// Reports the message's fallback, as it stands before the attempt being admitted.
        mutating func reportFallback(_ index: Int, now: ContinuousClock.Instant, neverSent: DeliveryOutcome) {
            let made = instructions.number - 1
            if let fallback = fallbacks[index] {
                report(index, fallback.otherwise, fallback.result, attempts: made, now: now)
            } else {
                report(index, neverSent, nil, attempts: made, now: now)
            }
        }

        /// Reports every pending message whose deadline has passed.
        mutating func expire(now: ContinuousClock.Instant) {
            let expired = pending.filter { terms[$0].deadline <= now }
            guard !expired.isEmpty else { return }
            for index in expired { reportFallback(index, now: now, neverSent: RetryLoop.heldUntilDeadline) }
            pending = PendingIndices(pending.filter { terms[$0].deadline > now })
        }

        /// A wait was cancelled: every message still to go reports its fallback.
        mutating func reportWaiting(now: ContinuousClock.Instant) {
            let cancelled = DeliveryOutcome.unavailable(reason: "cancelled", retryAfter: nil)
            if !waiting.isEmpty {
                // Cancelled during the back-off: the messages that were to go again.
                instructions = following
                pending = PendingIndices(waiting.sorted())
                waiting = []
            }
            for index in pending { reportFallback(index, now: now, neverSent: cancelled) }
            pending = PendingIndices([])
        }

        /// Moves on to the attempt that `judge` decided.
        mutating func next() {
            renewed = renewed || following.renewCredential
            instructions = following
            pending = PendingIndices(waiting.sorted())
            waiting = []
            retries = []
            held = false
            probe = false
        }
    }

    /// Judges one attempt's results: reports each final one, and decides which messages go again and how.
    ///
    /// - Returns: the back-off before the next attempt, or `nil` when it may start at once.
    @inline(never)
    private func judge(
        _ results: [AttemptResult],
        _ state: inout State,
        now: ContinuousClock.Instant,
        random: () -> Double
    ) -> Duration? {
        let number = state.instructions.number
        state.following = AttemptInstructions(number: number + 1, freshConnection: false, renewCredential: false)
        var transient: [(index: Int, otherwise: DeliveryOutcome, result: AttemptResult)] = []
        var freshConnection = false
        var notBefore: Duration?
        for (index, result) in zip(state.pending, results) {
            switch result.verdict {
            case .final(let outcome):
                state.report(index, outcome, result, attempts: number, now: now)
            case .refreshCredentialAndRetry(let otherwise):
                guard state.renewableCredential, !state.renewed else {
                    state.report(index, otherwise, result, attempts: number, now: now)
                    continue
                }
                state.fallbacks[index] = (otherwise, result)
                state.following.renewCredential = true
                state.waiting.append(index)
                state.retries.append(.credential)
            case .retry(let wait, let fresh, var otherwise):
                if result.timedOutAfterSending {
                    // Its last attempt may have been delivered, whatever ends it now.
                    otherwise = Self.noAnswer
                    state.timedOut += 1
                    let timeouts = state.timeouts[index, default: 0] + 1
                    state.timeouts[index] = timeouts
                    guard timeouts <= maxAttemptsAfterTimeout else {
                        state.report(index, otherwise, result, attempts: number, now: now)
                        continue
                    }
                }
                state.fallbacks[index] = (otherwise, result)
                freshConnection = freshConnection || fresh
                if let wait { notBefore = max(notBefore ?? .zero, wait) }
                transient.append((index, otherwise, result))
            }
        }
        guard !transient.isEmpty else {
            state.retrying = false
            return nil
        }
        // Each retry starts before its deadline: the round's back-off is cut short to the earliest deadline among
        // them (one last attempt at the deadline beats giving up early), never below the upstream's `Retry-After`; a
        // message whose deadline has come, or comes before that wait is over, reports its fallback now.
        let floor = notBefore ?? .zero
        var limit: Duration?
        for (index, otherwise, result) in transient {
            let left = state.terms[index].deadline - now
            guard left > .zero, floor <= left else {
                state.report(index, otherwise, result, attempts: number, now: now)
                continue
            }
            limit = min(limit ?? left, left)
            state.waiting.append(index)
            state.retries.append(result.retryCause)
        }
        guard let limit else {
            state.retrying = false
            return nil
        }
        state.retrying = true
        state.following.freshConnection = freshConnection
        return min(policy.delay(after: number, notBefore: notBefore, unit: random()), limit)
    }

    /// Counts the messages that go again, by cause, in `relay_upstream_retries_total`.
    private func count(_ retries: [RetryCause], provider: Provider) {
        guard !retries.isEmpty else { return }
        var counts: [RetryCause: Int] = [:]
        for cause in retries { counts[cause, default: 0] += 1 }
        for (cause, count) in counts {
            Counter(
                label: "relay_upstream_retries_total",
                dimensions: [("provider", provider.rawValue), ("cause", cause.rawValue)]
            ).increment(by: count)
        }
    }
}

/// What an attempt must do differently from the first.
struct AttemptInstructions: Sendable, Equatable {
    /// 1 for the first attempt.
    var number: Int
    /// Use a new connection: the last one was bound to another key, idle-closed or shutting down.
    var freshConnection: Bool
    /// The upstream refused the credential as expired: renew it first.
    var renewCredential: Bool
}

/// The indices of the messages an attempt sends, in increasing order: all of a send's messages (the first attempt,
/// and every attempt of a send of one message) without an array, or those listed.
struct PendingIndices: RandomAccessCollection, Sendable, Equatable {
    private enum Storage: Sendable, Equatable {
        /// `0..<count`.
        case all(Int)
        case listed([Int])
    }

    private var storage: Storage

    /// Every index below `count`.
    init(all count: Int) {
        storage = .all(count)
    }

    /// The indices given, in increasing order.
    init(_ indices: [Int]) {
        storage = .listed(indices)
    }

    var startIndex: Int { 0 }

    var endIndex: Int {
        switch storage {
        case .all(let count): count
        case .listed(let indices): indices.count
        }
    }

    subscript(position: Int) -> Int {
        switch storage {
        case .all: position
        case .listed(let indices): indices[position]
        }
    }
}
