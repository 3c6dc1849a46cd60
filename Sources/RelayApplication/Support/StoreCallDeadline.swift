package import RelayCore
import Synchronization

/// How long a request waits for one call to the store (`[store] request_timeout_ms`): a store that hangs (a database
/// that stopped answering, a connection pool waiting to reconnect) then costs the caller a 503 after the timeout, not
/// after the store's own timeouts, which may be a minute.
///
/// The call is not cancelled at the timeout but abandoned: it runs on in its own task (a store's call need not heed
/// cancellation), and its answer, if it comes, is dropped. Its effect on the store, if any, stands: only calls whose
/// late effect is harmless are given a deadline (a rate-limit lease spent by nobody, a read).
package struct StoreCallDeadline: Sendable {
    package let timeout: Duration
    let timer: DeadlineTimer
    let clock: RelayClock

    package init(timeout: Duration, timer: DeadlineTimer, clock: RelayClock) {
        self.timeout = timeout
        self.timer = timer
        self.clock = clock
    }

    /// The answer of `operation`, or ``StoreTimeout`` when it has not answered within ``timeout``.
    package func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let race = Race<T>()
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            race.state.withLock { $0.waiting = continuation }
            let call = Task {
                let result: Result<T, any Error>
                do {
                    result = .success(try await operation())
                } catch {
                    result = .failure(error)
                }
                let (answered, scheduled) = race.state.withLock { ($0.waiting.take(), $0.token.take()) }
                if let scheduled { timer.cancel(scheduled) }
                answered?.resume(with: result)
            }
            let scheduled = timer.schedule(at: clock.now + timeout) {
                guard let expired = race.state.withLock({ $0.waiting.take() }) else { return }
                call.cancel()
                expired.resume(throwing: StoreTimeout())
            }
            // Answered before the deadline was scheduled: the deadline is cancelled here instead.
            let answered = race.state.withLock { state in
                if state.waiting == nil { return true }
                state.token = scheduled
                return false
            }
            if answered { timer.cancel(scheduled) }
        }
    }

    /// Who resumes the caller first: the call's answer or the deadline.
    private final class Race<T: Sendable>: Sendable {
        struct State {
            var waiting: CheckedContinuation<T, any Error>?
            var token: DeadlineTimer.Token?
        }
        let state = Mutex(State())
    }
}
