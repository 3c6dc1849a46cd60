import Synchronization

/// The store probe of `GET /readyz`: asks the store whether it answers, and gives up waiting after a timeout.
///
/// ### Implementation
/// At most one probe is in flight. A caller that finds one running waits for its answer rather than starting
/// another, so a store that hangs holds one probe, however often `/readyz` is asked. Each caller waits for the answer
/// up to its own timeout: a timer task (which ends at the timeout) resumes it with ``Outcome/timedOut`` if the probe
/// has not answered by then; the probe, when it answers, resumes every caller still waiting and is forgotten, so the
/// next caller starts a new one. A probe that never answers is abandoned, not cancelled (a store's ping need not
/// heed cancellation): it stays the one in flight and callers keep answering ``Outcome/timedOut``.
final class StoreProbe: Sendable {
    enum Outcome: Sendable {
        case answered
        case failed(any Error)
        case timedOut
    }

    private enum Waiter {
        /// The caller's timer runs, its continuation is not registered yet.
        case arriving
        /// Registered, waiting for the probe or the timer.
        case waiting(CheckedContinuation<Outcome, Never>)
        /// The timer fired before the caller registered its continuation.
        case expired
    }

    private struct State {
        var probing = false
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())
    private let ping: @Sendable () async throws -> Void

    init(ping: @escaping @Sendable () async throws -> Void) {
        self.ping = ping
    }

    /// Whether the store answered within `timeout` (a probe already in flight counts; its answer is shared).
    func check(within timeout: Duration) async -> Outcome {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            state.waiters[state.nextID] = .arriving
            return state.nextID
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            resume(id, with: .timedOut)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let start = state.withLock { state -> Bool? in
                if case .expired? = state.waiters.removeValue(forKey: id) { return nil }
                state.waiters[id] = .waiting(continuation)
                defer { state.probing = true }
                return !state.probing
            }
            guard let start else {
                continuation.resume(returning: .timedOut)
                return
            }
            if start {
                Task {
                    let outcome: Outcome
                    do {
                        try await ping()
                        outcome = .answered
                    } catch {
                        outcome = .failed(error)
                    }
                    finish(with: outcome)
                }
            }
        }
    }

    /// The timer: resumes the caller `id` if it still waits, or marks it expired if it has not registered yet (it
    /// then answers at once); a caller the probe answered is gone already.
    private func resume(_ id: Int, with outcome: Outcome) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            switch state.waiters[id] {
            case .waiting(let continuation)?:
                state.waiters[id] = nil
                return continuation
            case .arriving?:
                state.waiters[id] = .expired
                return nil
            case .expired?, nil:
                return nil
            }
        }
        continuation?.resume(returning: outcome)
    }

    /// The probe's answer: every caller still waiting gets it, and the next caller starts a new probe.
    private func finish(with outcome: Outcome) {
        let continuations = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            state.probing = false
            var waiting: [CheckedContinuation<Outcome, Never>] = []
            for (id, waiter) in state.waiters {
                guard case .waiting(let continuation) = waiter else { continue }
                waiting.append(continuation)
                state.waiters[id] = nil
            }
            return waiting
        }
        for continuation in continuations { continuation.resume(returning: outcome) }
    }
}
