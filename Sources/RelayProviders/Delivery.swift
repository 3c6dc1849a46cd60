package import Foundation
package import RelayCore
import RelayHTTP2
import Synchronization

/// Time and chance, injected so that tests control back-off and token ages.
package struct SenderEnvironment: Sendable {
    package var now: @Sendable () -> Date
    package var sleep: @Sendable (Duration) async throws -> Void
    /// A uniform random number in `0...1`, for back-off jitter.
    package var random: @Sendable () -> Double

    package init(
        now: @escaping @Sendable () -> Date,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        random: @escaping @Sendable () -> Double
    ) {
        self.now = now
        self.sleep = sleep
        self.random = random
    }

    package static let live = SenderEnvironment(
        now: Date.init,
        sleep: { try await Task.sleep(for: $0) },
        random: { Double.random(in: 0...1) }
    )
}

/// The retry policy and budget of one provider, shared by all its sends.
package final class RetryGovernor: Sendable {
    package let policy: RetryPolicy
    private let budget: Mutex<RetryBudget>

    package init(policy: RetryPolicy = .init(), budget: RetryBudget = .init()) {
        self.policy = policy
        self.budget = Mutex(budget)
    }

    func recordFirstAttempt() { budget.withLock { $0.recordAttempt() } }
    func mayRetry() -> Bool { budget.withLock { $0.withdrawRetry() } }
}

/// One attempt's answer, classified.
struct AttemptResult: Sendable {
    var verdict: UpstreamVerdict
    var status: Int?
    var reason: String?
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

extension RetryGovernor {
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

/// Classifies a failure that produced no upstream answer.
func transportFailure(_ error: any Error) -> AttemptResult {
    guard let error = error as? HTTP2Error else {
        if let auth = error as? FCMAuthError {
            return AttemptResult(verdict: .final(.configurationError(reason: "OAuth: \(auth.reason)")), reason: auth.reason)
        }
        if error is CancellationError {
            return AttemptResult(verdict: .final(.unavailable(reason: "cancelled", retryAfter: nil)), reason: "cancelled")
        }
        return AttemptResult(verdict: .final(.configurationError(reason: "credential: \(error)")), reason: "credential")
    }
    let reason = "transport: \(error.kind.rawValue)"
    switch error.kind {
    case .tls, .notHTTP2, .invalidRequest:
        // The upstream's address, certificate or protocol is wrong: the operator's set-up.
        return AttemptResult(verdict: .final(.configurationError(reason: reason)), reason: reason)
    case .cancelled, .shuttingDown, .responseTooLarge, .protocolError, .other:
        return AttemptResult(verdict: .final(.unavailable(reason: reason, retryAfter: nil)), reason: reason)
    case .timeout, .overloaded, .streamReset, .noResponse, .connectFailed, .connectionLost:
        return AttemptResult(
            verdict: .retry(notBefore: nil, freshConnection: false, otherwise: .unavailable(reason: reason, retryAfter: nil)),
            reason: reason
        )
    }
}

/// Parses a `retry-after` header given in seconds.
func retryAfter(_ value: String?) -> Duration? {
    guard let value, let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
    return .seconds(seconds)
}

/// Runs `operation` for every element concurrently and returns the results in the elements' order.
func concurrentMap<Element: Sendable, Result: Sendable>(
    _ elements: [Element],
    _ operation: @escaping @Sendable (Element) async -> Result
) async -> [Result] {
    await withTaskGroup(of: (Int, Result).self) { group in
        for (index, element) in elements.enumerated() {
            group.addTask { (index, await operation(element)) }
        }
        var results = [Result?](repeating: nil, count: elements.count)
        for await (index, result) in group { results[index] = result }
        return results.compactMap { $0 }
    }
}
