package import Foundation

/// When to try again, and until when: exponential back-off with full jitter, never shorter than the upstream's own
/// wait, for as long as the notification's deadline allows.
///
/// ### Overview
/// A transient failure (no connection, a reset, a timeout, a 5xx, a 429) delays a notification; it does not fail it.
/// The retry loop tries again after ``delay(after:notBefore:unit:)`` until the notification's deadline
/// (``deadline(start:ttl:expiration:date:)``): the end of its own lifetime (`ttl`, else `expiration`) when it has one,
/// and at most ``window`` (`[upstream] retry_window_seconds`) after sending began. Attempts are not counted against
/// a fixed number: a short outage costs a few more attempts, a long one is spent mostly waiting (the back-off grows to
/// ``maxDelay``, and the upstream's circuit breaker holds sends while it is down), and only the deadline ends the
/// retries with `ProviderUnavailable`.
package struct RetryPolicy: Sendable, Equatable {
    /// The back-off ceiling of the first retry; it doubles with each further retry.
    package var baseDelay: Duration
    /// The largest back-off ceiling.
    package var maxDelay: Duration
    /// The longest a notification is retried, from the start of its sending; `[upstream] retry_window_seconds`.
    package var window: Duration

    /// `[upstream] retry_window_seconds` when it is not set: five minutes.
    package static let defaultWindow: Duration = .seconds(300)

    package init(
        baseDelay: Duration = .seconds(1),
        maxDelay: Duration = .seconds(30),
        window: Duration = RetryPolicy.defaultWindow
    ) {
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.window = max(window, .zero)
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

    /// The instant after which a notification gets no further attempt.
    ///
    /// A notification that says how long it is worth delivering is not retried past that: `ttl` seconds from `start`
    /// (`ttl` wins, as APNs and Expo read it), else until its `expiration` (UNIX seconds, read against `date`); a
    /// lifetime of 0 ("now or never") allows the first attempt only. Whatever it says, retries stop ``window`` after
    /// `start`. A critical alert follows the same rule: without a `ttl` it keeps trying for the whole window.
    ///
    /// - Parameters:
    ///   - start: when sending began, on the monotonic clock.
    ///   - date: the wall-clock time at `start`, against which `expiration` is read.
    package func deadline(
        start: ContinuousClock.Instant,
        ttl: Int?,
        expiration: Int64?,
        date: Date
    ) -> ContinuousClock.Instant {
        var lifetime = window
        if let ttl {
            lifetime = min(lifetime, .seconds(max(ttl, 0)))
        } else if let expiration {
            let left = expiration - Int64(date.timeIntervalSince1970.rounded(.down))
            lifetime = min(lifetime, .seconds(max(left, 0)))
        }
        return start + lifetime
    }
}

/// Limits retries to a share of first attempts while the upstream is healthy, so that partial failures are not
/// amplified into more load on an upstream in trouble.
///
/// ### Overview
/// Each first attempt deposits ``ratio`` of a token, and time deposits ``minimumPerSecond`` tokens a second, up to
/// ``cap``; each retry withdraws one whole token. With a ratio of 0.2, retries add at most about 20 % to the load in
/// steady state; the initial balance lets a quiet relay retry a few failures at once, and the time-based deposit
/// keeps retries moving when first attempts stop.
///
/// The budget never fails a notification: a retry that finds it empty waits (``timeUntilToken(now:)``) and asks
/// again, until its deadline. Retries held by an open circuit breaker need no token (the breaker already limits what
/// reaches the upstream), nor do critical alerts.
///
/// ### Implementation
/// Time is an input: every event takes the monotonic `now`, and the time-based deposit is the time elapsed since the
/// last event times ``minimumPerSecond``.
package struct RetryBudget: Sendable, Equatable {
    package let ratio: Double
    package let cap: Double
    /// Tokens deposited per second whatever the traffic; 0 deposits none.
    package let minimumPerSecond: Double
    package private(set) var balance: Double
    /// The instant of the last deposit by time.
    private var refilled: ContinuousClock.Instant?

    package init(ratio: Double = 0.2, cap: Double = 100, initial: Double = 10, minimumPerSecond: Double = 10) {
        self.ratio = ratio
        self.cap = cap
        self.minimumPerSecond = max(minimumPerSecond, 0)
        self.balance = min(initial, cap)
    }

    /// `count` first attempts were made.
    package mutating func recordAttempts(_ count: Int = 1, now: ContinuousClock.Instant) {
        refill(now)
        balance = min(cap, balance + ratio * Double(count))
    }

    /// Takes a token for a retry; `false` when the budget is empty and the retry must wait.
    package mutating func withdrawRetry(now: ContinuousClock.Instant) -> Bool {
        refill(now)
        guard balance >= 1 else { return false }
        balance -= 1
        return true
    }

    /// How long until time alone deposits a whole token, or `nil` when it never will (``minimumPerSecond`` is 0):
    /// then only first attempts refill the budget.
    package func timeUntilToken(now: ContinuousClock.Instant) -> Duration? {
        var settled = self
        settled.refill(now)
        guard settled.balance < 1 else { return .zero }
        guard minimumPerSecond > 0 else { return nil }
        return .seconds((1 - settled.balance) / minimumPerSecond)
    }

    private mutating func refill(_ now: ContinuousClock.Instant) {
        if let refilled, now > refilled, minimumPerSecond > 0 {
            balance = min(cap, balance + (now - refilled) / .seconds(1) * minimumPerSecond)
        }
        if refilled.map({ now > $0 }) ?? true { refilled = now }
    }
}
