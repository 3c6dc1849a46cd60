package import RelayCore
import Synchronization

/// The retry policy and budget of one provider, shared by all its sends, and the loop that applies them.
package final class RetryLoop: Sendable {
    package let policy: RetryPolicy
    private let budget: Mutex<RetryBudget>

    package init(policy: RetryPolicy = .init(), budget: RetryBudget = .init()) {
        self.policy = policy
        self.budget = Mutex(budget)
    }

    func recordFirstAttempt() { budget.withLock { $0.recordAttempt() } }
    func mayRetry() -> Bool { budget.withLock { $0.withdrawRetry() } }
}

/// What the next attempt must do differently.
struct AttemptInstructions: Sendable {
    /// 1 for the first attempt.
    var number: Int
    /// Use a new connection: the last one was bound to another key, idle-closed or shutting down.
    var freshConnection: Bool
    /// The upstream refused the credential as expired: renew it first.
    var renewCredential: Bool
}

extension RetryLoop {
    /// Runs attempts until one is final, the attempts or the retry budget run out, or the caller is cancelled.
    func deliver(
        environment: SenderEnvironment,
        attempt: (AttemptInstructions) async -> AttemptResult
    ) async -> DeliveryReport {
        let started = ContinuousClock.now
        var instructions = AttemptInstructions(number: 1, freshConnection: false, renewCredential: false)
        var renewed = false
        recordFirstAttempt()
        while true {
            let result = await attempt(instructions)
            func report(_ outcome: DeliveryOutcome) -> DeliveryReport {
                DeliveryReport(
                    outcome: outcome,
                    attempts: instructions.number,
                    upstreamStatus: result.status,
                    upstreamReason: result.reason,
                    latency: started.duration(to: .now)
                )
            }
            switch result.verdict {
            case .final(let outcome):
                return report(outcome)
            case .refreshCredentialAndRetry(let otherwise):
                // Once: a credential refused again right after renewal is the operator's problem (clock, key).
                guard !renewed, policy.allowsRetry(after: instructions.number) else { return report(otherwise) }
                renewed = true
                instructions = AttemptInstructions(
                    number: instructions.number + 1,
                    freshConnection: false,
                    renewCredential: true
                )
            case .retry(let notBefore, let freshConnection, let otherwise):
                guard policy.allowsRetry(after: instructions.number), mayRetry() else { return report(otherwise) }
                let delay = policy.delay(after: instructions.number, notBefore: notBefore, unit: environment.random())
                do {
                    try await environment.sleep(delay)
                } catch {
                    return report(otherwise)
                }
                instructions = AttemptInstructions(
                    number: instructions.number + 1,
                    freshConnection: freshConnection,
                    renewCredential: false
                )
            }
        }
    }
}
