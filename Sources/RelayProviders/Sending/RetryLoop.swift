package import RelayCore
import Synchronization

/// The one retry loop of every sender, with its provider's retry policy and retry budget (shared by all its sends).
///
/// ### Overview
/// A send hands the loop its messages (one for APNs and FCM, a batch for Expo) and a function that makes one attempt
/// for the messages still pending: it sends them and returns each one's classified answer. The loop runs attempts
/// until every message has its outcome, the attempts or the retry budget run out, or a back-off is cancelled.
///
/// ### Implementation
/// After each attempt every pending message is judged on its own verdict:
/// - ``UpstreamVerdict/final(_:)``: its outcome is reported.
/// - ``UpstreamVerdict/retry(notBefore:freshConnection:otherwise:)``: it goes again if the policy allows another
///   attempt and the budget gives a token (one per message retried), else its `otherwise` is reported.
/// - ``UpstreamVerdict/refreshCredentialAndRetry(otherwise:)``: it goes again at once with a renewed credential, if
///   the sender has one to renew, the policy allows another attempt and no credential was renewed yet in this send;
///   else its `otherwise` is reported. A credential refused again right after renewal is the operator's problem
///   (clock, key).
///
/// The messages that go again go together: after one back-off (full jitter, drawn once, and at least the longest
/// `notBefore` among them) when any of them is retried, on a fresh connection when any asked for one, with a renewed
/// credential when any asked for that. A cancelled back-off reports each its `otherwise` outcome.
package final class RetryLoop: Sendable {
    package let policy: RetryPolicy
    private let budget: Mutex<RetryBudget>

    package init(policy: RetryPolicy = .init(), budget: RetryBudget = .init()) {
        self.policy = policy
        self.budget = Mutex(budget)
    }

    /// What a message that never had its outcome reports; the loop reports on every message, so this stays unseen.
    private static let notSent = DeliveryReport(outcome: .unavailable(reason: "not sent", retryAfter: nil), attempts: 0)

    /// Runs attempts for `count` messages until each has its outcome.
    ///
    /// - Parameters:
    ///   - renewableCredential: whether the sender has a credential to renew when a verdict asks for it.
    ///   - attempt: sends the messages at the given indices (in increasing order) as `instructions` say and returns
    ///     one result per message, in the same order.
    /// - Returns: one report per message, in order.
    func run(
        count: Int,
        renewableCredential: Bool,
        environment: SenderEnvironment,
        attempt: (_ pending: [Int], _ instructions: AttemptInstructions) async -> [AttemptResult]
    ) async -> [DeliveryReport] {
        // Only what must outlive a suspension lives here; each attempt is judged by the synchronous `judge`, whose
        // temporaries stay on the thread's stack instead of growing every send's async frame.
        var state = State(count: count, renewableCredential: renewableCredential)
        budget.withLock { budget in
            for _ in 0..<count { budget.recordAttempt() }
        }
        while !state.pending.isEmpty {
            let results = await attempt(state.pending, state.instructions)
            if let delay = judge(results, &state, random: environment.random) {
                do {
                    try await environment.sleep(delay)
                } catch {
                    state.reportWaiting()
                    break
                }
            }
            state.next()
        }
        return state.reports
    }

    /// The loop's state between attempts.
    struct State {
        let started = ContinuousClock.now
        let renewableCredential: Bool
        var reports: [DeliveryReport]
        /// The messages the next attempt sends.
        var pending: [Int]
        var instructions = AttemptInstructions(number: 1, freshConnection: false, renewCredential: false)
        /// Whether the credential was renewed in this send.
        var renewed = false
        /// The messages that go again, each with the outcome it reports if it never gets another attempt.
        var waiting: [(index: Int, otherwise: DeliveryOutcome, result: AttemptResult)] = []
        var following = AttemptInstructions(number: 2, freshConnection: false, renewCredential: false)

        init(count: Int, renewableCredential: Bool) {
            self.renewableCredential = renewableCredential
            self.reports = Array(repeating: RetryLoop.notSent, count: count)
            self.pending = Array(0..<count)
        }

        mutating func report(_ index: Int, _ outcome: DeliveryOutcome, _ result: AttemptResult) {
            reports[index] = DeliveryReport(
                outcome: outcome,
                attempts: instructions.number,
                upstreamStatus: result.status,
                upstreamReason: result.reason,
                latency: started.duration(to: .now)
            )
        }

        /// A back-off was cancelled: every waiting message reports its fallback outcome.
        mutating func reportWaiting() {
            for message in waiting { report(message.index, message.otherwise, message.result) }
            waiting = []
        }

        /// Moves on to the attempt that `judge` decided.
        mutating func next() {
            renewed = renewed || following.renewCredential
            instructions = following
            pending = waiting.map(\.index)
            waiting = []
        }
    }

    /// Judges one attempt's results: reports each final one, and decides which messages go again and how.
    ///
    /// - Returns: the back-off before the next attempt, or `nil` when it may start at once.
    @inline(never)
    private func judge(_ results: [AttemptResult], _ state: inout State, random: () -> Double) -> Duration? {
        let number = state.instructions.number
        state.following = AttemptInstructions(number: number + 1, freshConnection: false, renewCredential: false)
        var backOff = false
        var notBefore: Duration?
        for (index, result) in zip(state.pending, results) {
            switch result.verdict {
            case .final(let outcome):
                state.report(index, outcome, result)
            case .refreshCredentialAndRetry(let otherwise):
                guard state.renewableCredential, !state.renewed, policy.allowsRetry(after: number) else {
                    state.report(index, otherwise, result)
                    continue
                }
                state.following.renewCredential = true
                state.waiting.append((index, otherwise, result))
            case .retry(let wait, let freshConnection, let otherwise):
                guard policy.allowsRetry(after: number), mayRetry() else {
                    state.report(index, otherwise, result)
                    continue
                }
                backOff = true
                state.following.freshConnection = state.following.freshConnection || freshConnection
                if let wait { notBefore = max(notBefore ?? .zero, wait) }
                state.waiting.append((index, otherwise, result))
            }
        }
        guard backOff else { return nil }
        return policy.delay(after: number, notBefore: notBefore, unit: random())
    }

    /// Takes a token from the budget for one retry; `false` when it is spent.
    private func mayRetry() -> Bool {
        budget.withLock { $0.withdrawRetry() }
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
