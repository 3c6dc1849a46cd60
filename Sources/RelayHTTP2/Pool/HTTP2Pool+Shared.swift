import Synchronization

extension HTTP2Pool {
    /// Where a caller of ``HTTP2Pool/send(_:)`` waits.
    ///
    /// Unchecked (`UnsafeContinuation`, which saves an allocation and an atomic exchange per request over
    /// `CheckedContinuation`) because each one is resumed exactly once, by construction: ``Shared/submit`` either
    /// resumes it itself (refusal) or appends it to the inbox, never both; the owner takes each event once, keeps the
    /// continuation under one request id and removes it from its table before resuming it; the state machine ends
    /// every request in exactly one finish, fail or cancel action, and the owner's exit resumes what is left in its
    /// table and in the inbox, which it empties under the lock (``Shared/ownerExiting()``), after which
    /// ``Shared/submit`` refuses. The state machine tests check the exactly-once ending of every request.
    typealias Continuation = UnsafeContinuation<HTTP2Response, any Error>

    /// What callers and the owner exchange.
    enum Event: Sendable {
        /// The request and how long it may take; its deadline counts from when the owner takes it (within a loop
        /// turn of the call). A `Duration` rather than an instant: `ContinuousClock.Instant` is resilient, and every
        /// copy of an event holding one would be a call through its value witnesses.
        case submit(RequestID, HTTP2Request, Duration, Continuation)
        case cancel(RequestID)
        case shutdown(deadline: ContinuousClock.Instant)
        /// The nghttp2 backend's DNS look-up for a connection finished (off the event loop).
        case resolved(ConnectionID, Result<[SocketAddressBytes], HTTP2Error>)
    }

    /// The state shared between callers and a pool's owner, each part behind its own lock.
    ///
    /// A cancellation that comes before its request was submitted needs no bookkeeping:
    /// ``submit(_:request:timeout:continuation:)`` runs on the caller's task and, under the inbox's lock, refuses a
    /// task already cancelled; a task cancelled after that check appends its `cancel` after the `submit`. A `cancel`
    /// for a request the owner does not know (never submitted, or already finished) is ignored by the state machine.
    final class Shared: Sendable {
        struct Inbox {
            var events: [Event] = []
            var ownerExited = false
            var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        }

        let inbox = Mutex(Inbox())
        let statistics = Mutex(HTTP2PoolStatistics())
        private let nextID = Atomic<RequestID>(1)
        /// Wakes the owner; called under the inbox's lock, only while the owner has not exited, and only when the
        /// inbox was empty: the owner takes every event at once, so a non-empty inbox means a wake-up is already on
        /// its way (one wake-up per batch, not per request).
        private let wake: @Sendable () -> Void

        init(wake: @escaping @Sendable () -> Void) {
            self.wake = wake
        }

        private func append(_ event: Event, to inbox: inout Inbox) {
            inbox.events.append(event)
            if inbox.events.count == 1 { wake() }
        }

        /// Takes an id before the request exists, so that its cancellation handler can name it.
        func reserve() -> RequestID {
            nextID.add(1, ordering: .relaxed).oldValue
        }

        /// Hands a request to the owner; called on the caller's task, inside its continuation's closure.
        func submit(
            _ id: RequestID,
            request: HTTP2Request,
            timeout: Duration,
            continuation: Continuation
        ) {
            let refusal: HTTP2Error? = inbox.withLock { inbox in
                if inbox.ownerExited { return HTTP2Error(.shuttingDown, detail: "the pool is shut down") }
                if Task.isCancelled { return HTTP2Error(.cancelled) }
                append(.submit(id, request, timeout, continuation), to: &inbox)
                return nil
            }
            if let refusal { continuation.resume(throwing: refusal) }
        }

        func cancel(_ id: RequestID) {
            inbox.withLock { inbox in
                if !inbox.ownerExited { append(.cancel(id), to: &inbox) }
            }
        }

        func requestShutdown(deadline: ContinuousClock.Instant, waiter: CheckedContinuation<Void, Never>?) {
            let exited = inbox.withLock { inbox in
                if inbox.ownerExited { return true }
                if let waiter { inbox.shutdownWaiters.append(waiter) }
                append(.shutdown(deadline: deadline), to: &inbox)
                return false
            }
            if exited { waiter?.resume() }
        }

        /// Hands the owner an event of its own making (a finished DNS look-up).
        func post(_ event: Event) {
            inbox.withLock { inbox in
                if !inbox.ownerExited { append(event, to: &inbox) }
            }
        }

        /// The owner takes the pending events. `events` comes in empty and goes out with the events: the two buffers
        /// swap, so neither is allocated again.
        func exchange(into events: inout [Event]) {
            inbox.withLock { inbox in
                swap(&inbox.events, &events)
            }
        }

        /// The owner is leaving: no more wake-ups, and from now on every
        /// ``submit(_:request:timeout:continuation:)`` refuses at once. Returns the events that arrived too late and
        /// the shutdown waiters, which the owner resumes last, once it has closed everything: so when `shutdown()`
        /// returns the pool is closed and refuses new requests (waiters are resumed nowhere else, except by
        /// ``requestShutdown(deadline:waiter:)`` when the owner has already exited).
        func ownerExiting() -> (late: [Event], waiters: [CheckedContinuation<Void, Never>]) {
            inbox.withLock { inbox in
                inbox.ownerExited = true
                let result = (inbox.events, inbox.shutdownWaiters)
                inbox.shutdownWaiters.removeAll()
                inbox.events.removeAll()
                return result
            }
        }

        func publish(_ snapshot: HTTP2PoolStatistics) {
            statistics.withLock { $0 = snapshot }
        }
    }
}
