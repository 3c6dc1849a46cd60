extension HTTP2Pool {
    /// Identifies one request within a pool.
    package typealias RequestID = UInt64

    /// The pool's decisions: admission, queueing when saturated, deadlines, and shutdown.
    ///
    /// ### Overview
    /// libcurl multiplexes and queues on its own, but it cannot bound memory, order waiting requests, expire them at
    /// their deadline or drain gracefully. The machine keeps at most `maxInFlight` requests inside libcurl (every
    /// connection's every stream, so libcurl 7.88.1 never has a reason to over-connect) and the rest in a FIFO queue
    /// with deadlines. Until the pool's first response it keeps a single request in flight: the server's SETTINGS
    /// (and so its stream limit) arrive before its first response, whereas libcurl would otherwise fill a cold
    /// connection's first flight up to nghttp2's assumed limit of 100 streams; APNs, too, allows one stream on a new
    /// connection until a request with a valid token succeeds.
    ///
    /// ### Implementation
    /// A value type: every event is a `mutating` method taking the current instant and returning actions as plain
    /// data. The owner thread performs them; the machine performs nothing, so tests feed it events and assert
    /// actions without sockets. Each request ends in exactly one `.finish…` or `.fail…` action, which is what lets the
    /// owner resume each caller exactly once.
    package struct StateMachine: Sendable {
        package enum Action: Equatable, Sendable {
            /// Hand the request to libcurl.
            case startTransfer(RequestID)
            /// Fail a request that is not in libcurl.
            case failRequest(RequestID, HTTP2Error)
            /// Remove a request's transfer from libcurl and fail it.
            case abortTransfer(RequestID, HTTP2Error)
            /// Nothing is left: close the connections and end the owner thread.
            case close
        }

        private enum Phase: Sendable, Equatable {
            case running
            /// Admitting nothing; queued and in-flight requests finish until `deadline`.
            case draining(deadline: ContinuousClock.Instant)
            case closed
        }

        private struct Waiting: Sendable {
            var id: RequestID
            var deadline: ContinuousClock.Instant
        }

        package let maxInFlight: Int
        package let maxQueued: Int
        private var phase: Phase = .running
        /// Whether a response has arrived yet; before that, one request at a time.
        private var warmedUp = false
        private(set) var inFlight: Set<RequestID> = []
        /// Waiting requests in arrival order; `queueHead` skips the ones already taken, so taking is O(1).
        private var queue: [Waiting] = []
        private var queueHead = 0
        /// Requests removed from the middle of the queue (cancelled); skipped when reached.
        private var removedFromQueue: Set<RequestID> = []

        package init(maxInFlight: Int, maxQueued: Int) {
            self.maxInFlight = max(1, maxInFlight)
            self.maxQueued = max(0, maxQueued)
        }

        /// Requests handed to libcurl.
        package var inFlightCount: Int { inFlight.count }
        /// Requests waiting for a stream.
        package var queuedCount: Int { queue.count - queueHead - removedFromQueue.count }
        package var isClosed: Bool { phase == .closed }
        package var isAdmitting: Bool { phase == .running }

        /// How many requests may be inside libcurl now.
        private var admissionLimit: Int { warmedUp ? maxInFlight : 1 }

        /// The earliest instant at which ``tick(now:)`` has something to do: a queued deadline or the drain deadline.
        package var nextDeadline: ContinuousClock.Instant? {
            var earliest: ContinuousClock.Instant?
            if let first = queue[queueHead...].first(where: { !removedFromQueue.contains($0.id) }) {
                earliest = first.deadline
            }
            if case .draining(let deadline) = phase {
                earliest = earliest.map { min($0, deadline) } ?? deadline
            }
            return earliest
        }

        // MARK: Events

        /// A caller submitted a request that must finish by `deadline`.
        package mutating func requestSubmitted(
            _ id: RequestID,
            deadline: ContinuousClock.Instant,
            now: ContinuousClock.Instant
        ) -> Action? {
            guard phase == .running else {
                return .failRequest(id, HTTP2Error(.shuttingDown, detail: "the pool is shutting down"))
            }
            if deadline <= now {
                return .failRequest(id, HTTP2Error(.timeout, detail: "the deadline passed before the request started"))
            }
            if inFlight.count < admissionLimit && queuedCount == 0 {
                inFlight.insert(id)
                return .startTransfer(id)
            }
            guard queuedCount < maxQueued else {
                return .failRequest(id, HTTP2Error(.overloaded, detail: "\(maxQueued) requests are already waiting"))
            }
            queue.append(Waiting(id: id, deadline: deadline))
            return nil
        }

        /// libcurl finished a transfer, with a response or without one; the owner resumes its caller.
        package mutating func transferFinished(
            _ id: RequestID,
            answered: Bool = true,
            now: ContinuousClock.Instant
        ) -> [Action] {
            guard inFlight.remove(id) != nil else { return [] }
            if answered { warmedUp = true }
            return admitWaiting(now: now) + closeIfDrained()
        }

        /// The caller's task was cancelled.
        package mutating func requestCancelled(_ id: RequestID, now: ContinuousClock.Instant) -> [Action] {
            let cancelled = HTTP2Error(.cancelled, detail: "the caller's task was cancelled")
            if inFlight.remove(id) != nil {
                return [.abortTransfer(id, cancelled)] + admitWaiting(now: now) + closeIfDrained()
            }
            if queue[queueHead...].contains(where: { $0.id == id }) && !removedFromQueue.contains(id) {
                removedFromQueue.insert(id)
                compactQueue()
                return [.failRequest(id, cancelled)] + closeIfDrained()
            }
            return []
        }

        /// Time passed: expire queued requests and, past the drain deadline, abort what is left.
        package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
            var actions: [Action] = []
            while let next = peekQueue(), next.deadline <= now {
                takeQueue()
                actions.append(.failRequest(next.id, HTTP2Error(.timeout, detail: "no stream became free in time")))
            }
            if case .draining(let deadline) = phase, deadline <= now {
                let late = HTTP2Error(.shuttingDown, detail: "the drain deadline passed")
                while let next = peekQueue() {
                    takeQueue()
                    actions.append(.failRequest(next.id, late))
                }
                for id in inFlight.sorted() {
                    actions.append(.abortTransfer(id, late))
                }
                inFlight.removeAll()
            }
            return actions + closeIfDrained()
        }

        /// Graceful shutdown: admit nothing new; queued and in-flight requests may finish until `deadline`.
        package mutating func shutdownRequested(
            deadline: ContinuousClock.Instant,
            now: ContinuousClock.Instant
        ) -> [Action] {
            switch phase {
            case .running:
                phase = .draining(deadline: deadline)
            case .draining(let current):
                phase = .draining(deadline: min(current, deadline))
            case .closed:
                return []
            }
            return tick(now: now)
        }

        // MARK: Helpers

        /// Moves waiting requests into free streams, failing those whose deadline passed.
        private mutating func admitWaiting(now: ContinuousClock.Instant) -> [Action] {
            var actions: [Action] = []
            while inFlight.count < admissionLimit, let next = peekQueue() {
                takeQueue()
                if next.deadline <= now {
                    actions.append(.failRequest(next.id, HTTP2Error(.timeout, detail: "no stream became free in time")))
                } else {
                    inFlight.insert(next.id)
                    actions.append(.startTransfer(next.id))
                }
            }
            return actions
        }

        private mutating func closeIfDrained() -> [Action] {
            guard case .draining = phase, inFlight.isEmpty, queuedCount == 0 else { return [] }
            phase = .closed
            return [.close]
        }

        private mutating func peekQueue() -> Waiting? {
            while queueHead < queue.count {
                let candidate = queue[queueHead]
                if removedFromQueue.remove(candidate.id) == nil { return candidate }
                queueHead += 1
            }
            return nil
        }

        private mutating func takeQueue() {
            queueHead += 1
            compactQueue()
        }

        /// Drops taken entries once they are half the storage, keeping memory bounded by the waiting requests.
        private mutating func compactQueue() {
            if queueHead > 64 && queueHead * 2 > queue.count {
                queue.removeFirst(queueHead)
                queueHead = 0
            }
            if queueHead == queue.count {
                queue.removeAll(keepingCapacity: true)
                queueHead = 0
            }
        }
    }
}
