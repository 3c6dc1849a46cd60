package import Foundation
package import RelayCore

/// Time and chance, injected so that tests control back-off, deadlines, the circuit breaker and token ages.
///
/// Everything that waits in a sender waits through ``sleep``, and everything that measures a wait reads ``instant``:
/// a test whose `sleep` moves its own clock forward instead of sleeping runs an outage of minutes in no time.
package struct SenderEnvironment: Sendable {
    /// The wall-clock time, for token ages and expirations given as dates.
    package var now: @Sendable () -> Date
    package var sleep: @Sendable (Duration) async throws -> Void
    /// A uniform random number in `0...1`, for back-off jitter.
    package var random: @Sendable () -> Double
    /// The monotonic time, for deadlines, back-off, the retry budget and the circuit breaker.
    package var instant: @Sendable () -> ContinuousClock.Instant

    package init(
        now: @escaping @Sendable () -> Date,
        sleep: @escaping @Sendable (Duration) async throws -> Void,
        random: @escaping @Sendable () -> Double,
        instant: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.now = now
        self.sleep = sleep
        self.random = random
        self.instant = instant
    }

    package static let live = SenderEnvironment(
        now: Date.init,
        sleep: { try await Task.sleep(for: $0) },
        random: { Double.random(in: 0...1) }
    )

    /// Time from `clock` (its date, its monotonic instant, sleeping on it), with uniform jitter.
    package static func clock(_ clock: RelayClock) -> SenderEnvironment {
        SenderEnvironment(
            now: { clock.date },
            sleep: { try await clock.sleep(until: clock.now + $0, tolerance: nil) },
            random: { Double.random(in: 0...1) },
            instant: { clock.now }
        )
    }
}
