import Metrics
import RelayCore
import Synchronization

/// What decides whether a send may go to one upstream now: its circuit breaker and its retry budget, and the sends
/// waiting on them.
///
/// ### Overview
/// One gate per upstream endpoint (one pool: APNs production and sandbox each have theirs), made by the sender's
/// ``RetryLoop``. Before each attempt the loop asks ``admit(needsToken:now:)``:
/// - the circuit is closed: the attempt goes, after taking a token from the budget when it retries a transient
///   failure (``Admission/budgetEmpty(tokenIn:generation:)`` when there is none);
/// - it is half-open and no probe is in flight: the attempt goes as the probe;
/// - otherwise it is held (``Admission/hold(until:generation:)``).
/// A held or budget-starved send waits with ``wait(until:after:environment:)``, which returns at the time given or as
/// soon as the circuit changes phase, whichever comes first, and then asks again. After each attempt the loop
/// reports what it showed (``requestEnded(_:probe:now:)``).
///
/// ### Implementation
/// The pure ``CircuitBreaker`` and ``RetryBudget`` under one `Mutex`, with a generation number that every change of
/// phase (or a probe that ended without a verdict) advances; waiters registered for a generation are resumed, after
/// the lock is released, when it moves on. The time is always the caller's (``SenderEnvironment/instant``), and
/// waiting is the caller's sleep raced against that wake-up, so tests drive the gate on their own clock. The phase is
/// published through ``CircuitBoard`` as `relay_upstream_circuit_state`.
///
/// The healthy upstream's path takes no lock (`relay-bench relay`, single-message phase: four lock round trips and
/// an array per push were a tenth of the relay's CPU per request). While the breaker is quiet
/// (``CircuitBreaker/isQuiet``: closed, no failure counted) a first attempt goes, and an answer ends, without
/// changing it, so both read an atomic copy of that fact instead; every locked change of the breaker republishes it
/// under the lock, so the copies are stored in the order of the changes. A send that reads "quiet" just before another
/// opens the circuit goes, as it would have a moment earlier. First attempts are counted in an atomic and deposited in
/// the budget by the next locked step that reads the budget, so a withdrawal sees every deposit made before it.
final class UpstreamGate: Sendable {
    enum Admission: Sendable, Equatable {
        /// Send now; as the circuit's probe when `probe`.
        case go(probe: Bool)
        /// Held by the circuit: ask again at `until`, or when the generation moves past `generation`.
        case hold(until: ContinuousClock.Instant, generation: UInt64)
        /// The retry budget is empty: ask again later (time alone deposits the next token in `tokenIn`, `nil`:
        /// only first attempts will), or when the generation moves past `generation`.
        case budgetEmpty(tokenIn: Duration?, generation: UInt64)
    }

    private struct State {
        var breaker: CircuitBreaker
        var budget: RetryBudget
        var generation: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    let provider: Provider
    private let board: CircuitBoard
    private let state: Mutex<State>
    /// `state.breaker.isQuiet`, stored under the lock after every change.
    private let quiet = Atomic<Bool>(true)
    /// First attempts not yet deposited in `state.budget`.
    private let undeposited = Atomic<Int>(0)
    /// Whether a first attempt was deposited under the lock, which started the budget's clock.
    private let anchored = Atomic<Bool>(false)

    init(provider: Provider, breaker: CircuitBreaker.Settings, budget: RetryBudget, board: CircuitBoard) {
        self.provider = provider
        self.board = board
        self.state = Mutex(State(breaker: CircuitBreaker(settings: breaker), budget: budget))
        board.publish(.closed, of: ObjectIdentifier(self))
    }

    var phase: CircuitBreaker.Phase { state.withLock { $0.breaker.phase } }

    /// Whether the circuit is closed with no failure counted: a first attempt then goes without asking
    /// (``admit(needsToken:now:)`` answers `go` without a lock), so many may be admitted at once.
    var isQuiet: Bool { quiet.load(ordering: .acquiring) }

    /// `count` sends made their first attempts: each deposits its share in the budget (at the next locked step that
    /// reads it).
    func recordFirstAttempt(count: Int = 1, now: ContinuousClock.Instant) {
        guard anchored.load(ordering: .acquiring) else {
            // The first deposits under the lock: it starts the budget's clock (its deposits by time count from here).
            state.withLock { state in
                deposit(into: &state, now: now)
                state.budget.recordAttempts(count, now: now)
            }
            anchored.store(true, ordering: .releasing)
            return
        }
        undeposited.add(count, ordering: .relaxed)
    }

    /// Deposits the first attempts counted since the last deposit; under the lock.
    private func deposit(into state: inout State, now: ContinuousClock.Instant) {
        let count = undeposited.exchange(0, ordering: .relaxed)
        if count > 0 { state.budget.recordAttempts(count, now: now) }
    }

    /// Whether an attempt may go now.
    ///
    /// - Parameter needsToken: whether it retries a transient failure and so takes a token from the budget when the
    ///   circuit is closed (a probe, a first attempt, a renewal, a critical alert and a send that was held need none).
    func admit(needsToken: Bool, now: ContinuousClock.Instant) -> Admission {
        if !needsToken && quiet.load(ordering: .acquiring) { return .go(probe: false) }
        let (admission, change) = state.withLock { state -> (Admission, Change?) in
            defer { quiet.store(state.breaker.isQuiet, ordering: .releasing) }
            deposit(into: &state, now: now)
            var change: Change?
            var admission = Admission.go(probe: false)
            for action in state.breaker.requestReady(now: now) {
                switch action {
                case .send:
                    if needsToken && !state.budget.withdrawRetry(now: now) {
                        admission = .budgetEmpty(
                            tokenIn: state.budget.timeUntilToken(now: now), generation: state.generation)
                    }
                case .probe:
                    admission = .go(probe: true)
                case .hold(let until):
                    admission = .hold(until: until, generation: state.generation)
                case .phaseChanged, .releaseHeld:
                    change = Self.advance(&state, action)
                }
            }
            return (admission, change)
        }
        change?.perform(on: self)
        return admission
    }

    /// An attempt that went has ended, showing `signal`; `probe` when it went as the probe.
    func requestEnded(_ signal: CircuitBreaker.Signal, probe: Bool, now: ContinuousClock.Instant) {
        if signal != .failure && !probe && quiet.load(ordering: .acquiring) { return }
        let change = state.withLock { state -> Change? in
            defer { quiet.store(state.breaker.isQuiet, ordering: .releasing) }
            var change: Change?
            for action in state.breaker.requestEnded(signal, probe: probe, now: now) {
                change = Self.advance(&state, action) ?? change
            }
            return change
        }
        change?.perform(on: self)
    }

    /// Waits until `deadline` on the environment's clock, or until the generation moves past `generation`, whichever
    /// comes first; returns at once when the task is cancelled.
    func wait(
        until deadline: ContinuousClock.Instant,
        after generation: UInt64,
        environment: SenderEnvironment
    ) async {
        let delay = deadline - environment.instant()
        guard delay > .zero else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await environment.sleep(delay) }
            group.addTask { await self.changed(after: generation) }
            _ = await group.next()
            group.cancelAll()
        }
    }

    /// Returns once the generation is past `generation`, or the task is cancelled.
    private func changed(after generation: UInt64) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    // Checked under the lock `onCancel` takes: a cancellation either came first (and is seen here) or
                    // finds the waiter registered.
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// What to do once the lock is released: wake the waiters, and publish the phase when it changed.
    private struct Change {
        var waiters: [CheckedContinuation<Void, Never>]
        var phase: CircuitBreaker.Phase?

        func perform(on gate: UpstreamGate) {
            if let phase { gate.board.publish(phase, of: ObjectIdentifier(gate)) }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Moves to the next generation and takes its waiters.
    private static func advance(_ state: inout State, _ action: CircuitBreaker.Action) -> Change? {
        let phase: CircuitBreaker.Phase?
        switch action {
        case .phaseChanged(let new): phase = new
        case .releaseHeld: phase = nil
        case .send, .probe, .hold: return nil
        }
        state.generation += 1
        defer { state.waiters.removeAll() }
        return Change(waiters: Array(state.waiters.values), phase: phase)
    }
}

/// The circuit phases of one provider's upstreams, published as `relay_upstream_circuit_state{provider}`: the most
/// open phase among them (APNs has an upstream per environment and key), 0 closed, 1 half-open, 2 open.
final class CircuitBoard: Sendable {
    let provider: Provider
    private let phases = Mutex<[ObjectIdentifier: CircuitBreaker.Phase]>([:])

    init(provider: Provider) {
        self.provider = provider
    }

    /// The most open phase among the provider's upstreams.
    var phase: CircuitBreaker.Phase { phases.withLock { $0.values.max() ?? .closed } }

    func publish(_ phase: CircuitBreaker.Phase, of upstream: ObjectIdentifier) {
        phases.withLock { phases in
            phases[upstream] = phase
            // Recorded under the lock, so that two upstreams changing at once cannot publish out of order.
            Gauge(label: "relay_upstream_circuit_state", dimensions: [("provider", provider.rawValue)])
                .record((phases.values.max() ?? .closed).rawValue)
        }
    }
}
