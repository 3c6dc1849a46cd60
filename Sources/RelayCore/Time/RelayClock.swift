package import Foundation

/// The relay's one source of time: the wall-clock ``date`` that records carry, and the monotonic ``now`` that
/// deadlines, intervals and sleeps are measured on.
///
/// ### Overview
/// A relay is built with one clock (`Relay(clock:)`), which hands it to every part that reads time: the delivery
/// queue's deadline timer, the commit queue (checkpoint interval and checkpoint time), the authenticator (its cache
/// and key expiry), delivery jobs (receipt, usage and audit times) and the maintenance service (pruning and its
/// interval). In production it is ``system``; a test builds the relay on a ``ManualClock`` (``manual(_:)``) and moves
/// time forward itself instead of sleeping.
///
/// ### Implementation
/// `RelayClock` is a `Clock` whose instants are `ContinuousClock.Instant`s, so the pure parts that take instants
/// (``DeadlineSchedule``, the pool's state machine) need no generic parameter, and a manual clock's instants compare
/// with the system's. Waiting on the clock (``sleep(until:tolerance:)``) is real sleeping on ``system``, and on a
/// manual clock lasts until the test has advanced it far enough.
package struct RelayClock: Clock {
    package typealias Instant = ContinuousClock.Instant

    private enum Source: Sendable {
        case system
        case manual(ManualClock)
    }

    private let source: Source

    /// The process's clocks: `Date()` and `ContinuousClock`.
    package static let system = RelayClock(source: .system)

    /// Time that moves only when `clock` is advanced.
    package static func manual(_ clock: ManualClock) -> RelayClock { RelayClock(source: .manual(clock)) }

    /// The monotonic time, for deadlines and intervals; never moves back, unaffected by changes of the wall clock.
    package var now: Instant {
        switch source {
        case .system: ContinuousClock.now
        case .manual(let clock): clock.now
        }
    }

    /// The wall-clock time, for what is recorded or compared with stored dates: receipts, usage days, audit records,
    /// key expiry.
    package var date: Date {
        switch source {
        case .system: Date()
        case .manual(let clock): clock.date
        }
    }

    package var minimumResolution: Duration {
        switch source {
        case .system: ContinuousClock().minimumResolution
        case .manual: .zero
        }
    }

    /// Waits until `deadline` is now (at once if it has passed).
    ///
    /// - Throws: `CancellationError` when the task is cancelled first.
    package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        switch source {
        case .system: try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
        case .manual(let clock): try await clock.sleep(until: deadline)
        }
    }
}
