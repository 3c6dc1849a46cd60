/// When to try again: exponential back-off with full jitter, bounded attempts, and the upstream's own wait.
package struct RetryPolicy: Sendable, Equatable {
    /// Attempts per message, the first included.
    package var maxAttempts: Int
    /// The back-off ceiling of the first retry; it doubles with each further retry.
    package var baseDelay: Duration
    /// The largest back-off ceiling.
    package var maxDelay: Duration

    package init(maxAttempts: Int = 3, baseDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(30)) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Whether another attempt may follow attempt number `attempt` (1 for the first).
    package func allowsRetry(after attempt: Int) -> Bool {
        attempt < maxAttempts
    }

    /// The wait before the retry that follows attempt number `attempt`.
    ///
    /// Full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"): a uniform draw between zero and
    /// `min(maxDelay, baseDelay × 2^(attempt−1))`, so that clients that failed together do not retry together. An
    /// upstream's `Retry-After` (or documented minimum) is a floor, never shortened by jitter.
    ///
    /// - Parameter unit: a random number in `0...1`, injected for tests.
    package func delay(after attempt: Int, notBefore: Duration?, unit: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let ceiling = min(maxDelay, baseDelay * Double(1 << exponent))
        let jittered = ceiling * min(max(unit, 0), 1)
        return max(jittered, notBefore ?? .zero)
    }
}

/// Limits retries to a share of first attempts, so that an upstream in trouble is not buried under retries.
///
/// Each first attempt deposits `ratio` of a token (up to `cap`); each retry withdraws one whole token and is refused
/// when there is none. With a ratio of 0.2, retries add at most about 20 % to the load in steady state; the initial
/// balance lets a quiet relay retry a few failures at once.
package struct RetryBudget: Sendable, Equatable {
    package let ratio: Double
    package let cap: Double
    package private(set) var balance: Double

    package init(ratio: Double = 0.2, cap: Double = 100, initial: Double = 10) {
        self.ratio = ratio
        self.cap = cap
        self.balance = min(initial, cap)
    }

    /// A first attempt was made.
    package mutating func recordAttempt() {
        balance = min(cap, balance + ratio)
    }

    /// Takes a token for a retry; `false` when the budget is spent and the retry must not happen.
    package mutating func withdrawRetry() -> Bool {
        guard balance >= 1 else { return false }
        balance -= 1
        return true
    }
}
