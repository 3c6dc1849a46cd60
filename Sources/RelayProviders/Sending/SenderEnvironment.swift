package import Foundation

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
