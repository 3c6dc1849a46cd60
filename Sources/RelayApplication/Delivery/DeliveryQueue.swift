import Foundation
import Logging
import Metrics
package import RelayCore
import ServiceLifecycle
import Synchronization

/// Runs delivery jobs in its own task group for the life of the relay, and bounds how many notifications it holds.
///
/// ### Overview
/// - **Bounded.** At most ``capacity`` notifications are accepted and not concluded at once, in memory and in the
///   delivery journal alike (a resumed notification is in a job too). A request takes room for its notifications
///   (``reserve(_:)``) before anything of it is written or sent; without room it is refused whole with
///   ``RequestRefusal/queueFull(retryAfter:)`` (503), so the relay never accepts what it cannot keep.
/// - **Shutdown.** On graceful shutdown it stops taking jobs (new pushes get 503 SHUTTING_DOWN) and lets the
///   accepted ones finish for up to ``drainTimeout``; then it journals what is still in flight
///   (``DeliveryJob/journalUnfinished()``), for the next start to resume, cancels those jobs and returns once they
///   have ended. Without a drain timeout it waits for every job, however long.
/// - It also runs the timer that ends requests' waits at their deadlines (``deadlines``).
package final class DeliveryQueue: Service, Sendable, CustomStringConvertible {
    package var description: String { "DeliveryQueue" }

    /// Room taken for notifications about to be submitted; ``submit(_:using:)`` or ``release(_:)`` gives it back.
    struct Reservation: Sendable {
        let count: Int
    }

    private struct State {
        var accepting = true
        /// Notifications reserved or in running jobs.
        var held = 0
        var running: [ObjectIdentifier: DeliveryJob] = [:]
        var idleWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// The most notifications accepted and not concluded at once (`[server] max_pending_notifications`).
    package let capacity: Int
    /// How long shutdown waits for running jobs before it journals what is left (`[server] drain_seconds`); `nil`
    /// waits for ever.
    package let drainTimeout: Duration?
    /// What a refused request is told to wait, in seconds: the queue frees room as outcomes arrive.
    package static let retryAfterWhenFull = 5

    private let stream: AsyncStream<DeliveryJob>
    private let continuation: AsyncStream<DeliveryJob>.Continuation
    private let state = Mutex(State())
    private let clock: RelayClock
    /// Notifications accepted whose upstream outcome is not known yet.
    private let pending = Meter(label: "relay_receipts_pending")
    /// Ends requests' waits at their deadlines; runs while the queue runs.
    let deadlines: DeadlineTimer

    /// - Parameters:
    ///   - clock: The relay's clock, on which request deadlines and the drain timeout pass.
    ///   - capacity: The most notifications held at once.
    ///   - drainTimeout: How long shutdown waits for running jobs; `nil` waits for them all.
    package init(clock: RelayClock = .system, capacity: Int = 20_000, drainTimeout: Duration? = nil) {
        (stream, continuation) = AsyncStream.makeStream(of: DeliveryJob.self)
        deadlines = DeadlineTimer(clock: clock)
        self.clock = clock
        self.capacity = capacity
        self.drainTimeout = drainTimeout
    }

    /// Whether new work is accepted.
    package var isAccepting: Bool { state.withLock { $0.accepting } }

    /// How many more notifications the queue takes now.
    package var room: Int { state.withLock { max(0, capacity - $0.held) } }

    /// Whether `count` more notifications fit now (a check before the tenant's rate is spent; ``reserve(_:)`` decides).
    func hasRoom(for count: Int) -> Bool { room >= count }

    /// Takes room for `count` notifications.
    ///
    /// - Throws: ``RequestRefusal/shuttingDown`` after shutdown began, ``RequestRefusal/queueFull(retryAfter:)``
    ///   when they do not fit.
    func reserve(_ count: Int) throws(RequestRefusal) -> Reservation {
        let refusal = state.withLock { state -> RequestRefusal? in
            guard state.accepting else { return .shuttingDown }
            guard state.held + count <= capacity else { return .queueFull(retryAfter: Self.retryAfterWhenFull) }
            state.held += count
            return nil
        }
        if let refusal {
            if case .queueFull = refusal {
                Counter(label: "relay_queue_full_total").increment()
            }
            throw refusal
        }
        return Reservation(count: count)
    }

    /// Gives back room taken and not used.
    func release(_ reservation: Reservation) {
        state.withLock { $0.held -= reservation.count }
    }

    /// Runs `job` in the room `reservation` took for it (its notifications' count).
    ///
    /// - Throws: ``RequestRefusal/shuttingDown`` after shutdown began; the room is given back.
    func submit(_ job: DeliveryJob, using reservation: Reservation) throws(RequestRefusal) {
        let accepted = state.withLock { state in
            // The room taken is the job's from now on, given back when it ends.
            state.held += job.items.count - reservation.count
            guard state.accepting, case .enqueued = continuation.yield(job) else {
                state.held -= job.items.count
                return false
            }
            state.running[ObjectIdentifier(job)] = job
            return true
        }
        guard accepted else { throw .shuttingDown }
        pending.increment(by: Double(job.items.count))
    }

    /// The receipt ids of the notifications in running jobs without an outcome yet; `journaledOnly`: only those that
    /// may have journal entries this instance holds (the leases it renews).
    func receiptIDsInFlight(journaledOnly: Bool) -> [String] {
        let jobs = state.withLock { Array($0.running.values) }
        return jobs.flatMap { $0.receiptIDsInFlight(journaledOnly: journaledOnly) }
    }

    /// Returns once no job is running (for tests and orderly shutdown; new jobs may start right after).
    package func waitUntilIdle() async {
        _ = await idle()
    }

    /// Returns once no job is running (`true`), or when the task is cancelled first (`false`).
    private func idle() async -> Bool {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let result = state.withLock { state -> Bool? in
                    if state.running.isEmpty { return true }
                    if Task.isCancelled { return false }
                    state.idleWaiters[id] = continuation
                    return nil
                }
                if let result { continuation.resume(returning: result) }
            }
        } onCancel: {
            state.withLock { $0.idleWaiters.removeValue(forKey: id) }?.resume(returning: false)
        }
    }

    /// Whether every job ended within `limit` (for ever when `nil`).
    private func drained(within limit: Duration?) async -> Bool {
        guard let limit else { return await idle() }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.idle() }
            group.addTask {
                try? await self.clock.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func jobFinished(_ job: DeliveryJob) {
        pending.decrement(by: Double(job.items.count))
        let waiters = state.withLock { state in
            state.held -= job.items.count
            state.running[ObjectIdentifier(job)] = nil
            guard state.running.isEmpty else { return [CheckedContinuation<Bool, Never>]() }
            defer { state.idleWaiters.removeAll() }
            return Array(state.idleWaiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Stops taking jobs; the running ones finish.
    package func stopAccepting() {
        state.withLock { state in
            state.accepting = false
            continuation.finish()
        }
    }

    package func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.deadlines.run() }
                await withDiscardingTaskGroup { jobs in
                    for await job in stream {
                        jobs.addTask {
                            await job.run()
                            self.jobFinished(job)
                        }
                    }
                    // No more jobs come (shutdown, or the service was cancelled): the running ones get the drain.
                    if await !self.drained(within: self.drainTimeout) {
                        await self.journalRunning()
                        jobs.cancelAll()
                    }
                }
                // Every job's waiters are resumed when it ends; the timer stops once their deadlines are cancelled.
                self.deadlines.stop()
            }
        } onGracefulShutdown: {
            self.stopAccepting()
        }
    }

    /// Journals what the running jobs have not concluded, all in one round of group commit.
    private func journalRunning() async {
        let jobs = state.withLock { Array($0.running.values) }
        await withDiscardingTaskGroup { group in
            for job in jobs { group.addTask { await job.journalUnfinished() } }
        }
    }
}
