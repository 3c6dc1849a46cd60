package import Foundation
import Synchronization

/// Time that stands still until it is advanced, for tests: the relay runs on it through ``RelayClock/manual(_:)``.
///
/// ``advance(by:)`` moves the wall-clock date and the monotonic instant together and wakes every sleeper whose
/// deadline it reaches. ``waitForSleepers(_:)`` lets a test wait until the code under test is asleep on the clock
/// before moving it, so that a sleep computed after the move cannot miss it.
package final class ManualClock: Sendable {
    private struct Sleeper {
        var deadline: RelayClock.Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var date: Date
        var now: RelayClock.Instant
        var sleepers: [UInt64: Sleeper] = [:]
        var nextSleeper: UInt64 = 0
        /// Tests waiting for a number of sleepers.
        var sleeperWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// The waiters whose count of sleepers is reached, removed.
        mutating func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
            let count = sleepers.count
            let ready = sleeperWaiters.filter { $0.count <= count }.map(\.continuation)
            sleeperWaiters.removeAll { $0.count <= count }
            return ready
        }
    }

    private let state: Mutex<State>

    /// A clock that reads `date` (by default a fixed moment, so that tests do not depend on the day they run) and
    /// whose monotonic time starts at the process's current instant.
    package init(date: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(date: date, now: ContinuousClock.now))
    }

    package var date: Date { state.withLock { $0.date } }
    package var now: RelayClock.Instant { state.withLock { $0.now } }

    /// How many tasks sleep on the clock.
    package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Moves time forward by `duration` and wakes the sleepers whose deadline has come.
    package func advance(by duration: Duration) {
        precondition(duration >= .zero, "time does not go back")
        let woken = state.withLock { state in
            state.now += duration
            state.date += Self.seconds(duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once at least `count` tasks sleep on the clock.
    package func waitForSleepers(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state in
                if state.sleepers.count >= count { return true }
                state.sleeperWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Waits until the clock has been advanced to `deadline`; see ``RelayClock/sleep(until:tolerance:)``.
    func sleep(until deadline: RelayClock.Instant) async throws {
        let id = state.withLock { state in
            defer { state.nextSleeper += 1 }
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (result, waiters) = state.withLock {
                    state -> (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) in
                    // Checked under the lock that `onCancel` takes: a cancellation either comes before (and is seen
                    // here) or finds the sleeper registered.
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    if deadline <= state.now { return (.success(()), []) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return (nil, state.satisfiedWaiters())
                }
                for waiter in waiters { waiter.resume() }
                if let result { continuation.resume(with: result) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
