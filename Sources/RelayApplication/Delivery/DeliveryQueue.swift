import Logging
import Metrics
package import RelayCore
import ServiceLifecycle
import Synchronization

/// Runs delivery jobs in its own task group for the life of the relay.
///
/// On graceful shutdown it stops taking jobs (new pushes get 503 SHUTTING_DOWN) and returns once every accepted
/// job has finished, so no accepted push is dropped. It also runs the timer that ends requests' waits at their
/// deadlines (``deadlines``).
package final class DeliveryQueue: Service, Sendable, CustomStringConvertible {
    package var description: String { "DeliveryQueue" }

    private let stream: AsyncStream<DeliveryJob>
    private let continuation: AsyncStream<DeliveryJob>.Continuation
    private let accepting = Mutex(true)
    /// Notifications accepted whose upstream outcome is not known yet.
    private let pending = Meter(label: "relay_receipts_pending")
    private let activity = Mutex<(running: Int, idleWaiters: [CheckedContinuation<Void, Never>])>((0, []))
    /// Ends requests' waits at their deadlines; runs while the queue runs.
    let deadlines: DeadlineTimer

    /// - Parameter clock: The relay's clock, on which request deadlines pass.
    package init(clock: RelayClock = .system) {
        (stream, continuation) = AsyncStream.makeStream(of: DeliveryJob.self)
        deadlines = DeadlineTimer(clock: clock)
    }

    /// Whether new work is accepted.
    package var isAccepting: Bool { accepting.withLock { $0 } }

    func submit(_ job: DeliveryJob) throws(RequestRefusal) {
        let accepted = accepting.withLock { accepting in
            guard accepting else { return false }
            activity.withLock { $0.running += 1 }
            pending.increment(by: Double(job.items.count))
            if case .enqueued = continuation.yield(job) { return true }
            activity.withLock { $0.running -= 1 }
            return false
        }
        guard accepted else { throw .shuttingDown }
    }

    /// Returns once no job is running (for tests and orderly shutdown; new jobs may start right after).
    package func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = activity.withLock { activity in
                if activity.running == 0 { return true }
                activity.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func jobFinished() {
        let waiters = activity.withLock { activity in
            activity.running -= 1
            guard activity.running == 0 else { return [CheckedContinuation<Void, Never>]() }
            defer { activity.idleWaiters.removeAll() }
            return activity.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops taking jobs; the running ones finish.
    package func stopAccepting() {
        accepting.withLock { accepting in
            accepting = false
            continuation.finish()
        }
    }

    package func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.deadlines.run() }
                for await job in stream {
                    group.addTask {
                        await job.run()
                        self.pending.decrement(by: Double(job.items.count))
                        self.jobFinished()
                    }
                }
                // Every job's waiters are resumed when it ends; the timer stops once their deadlines are cancelled.
                await self.waitUntilIdle()
                self.deadlines.stop()
            }
        } onGracefulShutdown: {
            self.stopAccepting()
        }
    }
}
