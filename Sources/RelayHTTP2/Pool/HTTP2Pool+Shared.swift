import Synchronization

extension HTTP2Pool {
    /// Where a caller of ``HTTP2Pool/send(_:)`` waits.
    ///
    /// Unchecked (`UnsafeContinuation`, which saves an allocation and an atomic exchange per request over
    /// `CheckedContinuation`) because each one is resumed exactly once, by construction: ``Shared/submit`` either
    /// resumes it itself (refusal) or appends it to the inbox, never both; the owner takes each event once, keeps the
    /// completion under one request id and removes it from its table before resuming it; the state machine ends
    /// every request in exactly one finish, fail or cancel action, and the owner's exit resumes what is left in its
    /// table and in the inbox, which it empties under the lock (``Shared/ownerExiting()``), after which
    /// ``Shared/submit`` refuses. The state machine tests check the exactly-once ending of every request.
    typealias Continuation = UnsafeContinuation<HTTP2Response, any Error>

    /// How the owner hands one request's result back: to its own caller (``HTTP2Pool/send(_:)``), or to the batch it
    /// belongs to (``HTTP2Pool/send(all:)``), which resumes its caller once, when its last request ends. Either is
    /// completed exactly once, for the reasons ``Continuation`` gives.
    enum Completion: Sendable {
        case caller(Continuation)
        case member(Batch, index: Int)

        func resume(with result: Result<HTTP2Response, any Error>) {
            switch self {
            case .caller(let continuation): continuation.resume(with: result)
            case .member(let batch, let index): batch.complete(index, with: result)
            }
        }

        func resume(returning response: HTTP2Response) {
            resume(with: .success(response))
        }

        func resume(throwing error: any Error) {
            resume(with: .failure(error))
        }
    }

    /// The requests of one ``HTTP2Pool/send(all:)``: their results as they end, and the caller, resumed once with
    /// all of them when the last one ends.
    ///
    /// `relay-bench relay` (batched APNs, 100 notifications a relay request): one continuation, one task resumed and
    /// one inbox hand-over for the lot, instead of one each per notification.
    final class Batch: Sendable {
        typealias Results = [Result<HTTP2Response, any Error>]

        private struct State {
            var results: [Result<HTTP2Response, any Error>?]
            var remaining: Int
        }

        private let state: Mutex<State>
        /// Resumed exactly once: by the member whose result makes `remaining` zero, which happens once, under the
        /// lock, since each member is completed exactly once (see ``Completion``).
        private let continuation: UnsafeContinuation<Results, Never>

        init(count: Int, continuation: UnsafeContinuation<Results, Never>) {
            self.state = Mutex(State(results: Array(repeating: nil, count: count), remaining: count))
            self.continuation = continuation
        }

        /// Records member `index`'s result; the last one resumes the caller, outside the lock.
        func complete(_ index: Int, with result: Result<HTTP2Response, any Error>) {
            let finished = state.withLock { state -> Results? in
                state.results[index] = result
                state.remaining -= 1
                guard state.remaining == 0 else { return nil }
                // Every member has its result here: none is nil.
                return state.results.map { $0 ?? .failure(HTTP2Error(.cancelled)) }
            }
            if let finished { continuation.resume(returning: finished) }
        }

        /// Every member refused at once, before any reached the owner.
        func refuseAll(_ error: HTTP2Error) {
            let count = state.withLock { state in
                state.remaining = 0
                return state.results.count
            }
            continuation.resume(returning: Array(repeating: .failure(error), count: count))
        }
    }

    /// What callers and the owner exchange.
    enum Event: Sendable {
        /// The request and how long it may take; its deadline counts from when the owner takes it (within a loop
        /// turn of the call). A `Duration` rather than an instant: `ContinuousClock.Instant` is resilient, and every
        /// copy of an event holding one would be a call through its value witnesses.
        case submit(RequestID, HTTP2Request, Duration, Completion)
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

        private func append(_ event: consuming Event, to inbox: inout Inbox) {
            inbox.events.append(consume event)
            if inbox.events.count == 1 { wake() }
        }

        /// Takes an id before the request exists, so that its cancellation handler can name it.
        func reserve(_ count: Int = 1) -> RequestID {
            nextID.add(RequestID(count), ordering: .relaxed).oldValue
        }

        /// Hands a request to the owner; called on the caller's task, inside its continuation's closure.
        func submit(
            _ id: RequestID,
            request: consuming HTTP2Request,
            timeout: Duration,
            continuation: Continuation
        ) {
            // The request is moved into the inbox, not copied: the lock's closure cannot consume what it captures,
            // so the event is taken out of an optional inside it. A copy retained the request's buffers here and
            // released them again when the caller's own copy ended (about 3 % of the process in
            // `relay-bench transport`, as atomic operations on buffers the event loop touches next).
            var event: Event? = .submit(id, consume request, timeout, .caller(continuation))
            let refusal: HTTP2Error? = inbox.withLock { inbox in
                if let refusal = Self.refusal(of: inbox) { return refusal }
                if let taken = event.take() { append(consume taken, to: &inbox) }
                return nil
            }
            if let refusal { continuation.resume(throwing: refusal) }
        }

        /// Hands the requests of a batch to the owner under one lock, with at most one wake-up; their ids are
        /// `first`, `first + 1`, …. Either all reach the inbox or all are refused. The requests are moved out of
        /// `requests` (each swapped for an empty one), not copied: see ``submit(_:request:timeout:continuation:)``.
        func submit(
            first: RequestID,
            requests: inout [HTTP2Request],
            timeout: (HTTP2Request) -> Duration,
            batch: Batch
        ) {
            let refusal: HTTP2Error? = inbox.withLock { inbox in
                if let refusal = Self.refusal(of: inbox) { return refusal }
                inbox.events.reserveCapacity(inbox.events.count + requests.count)
                for index in requests.indices {
                    var request = HTTP2Request(url: "")
                    swap(&request, &requests[index])
                    let limit = timeout(request)
                    // `append` wakes the owner for the first event only, and only if the inbox was empty.
                    append(
                        .submit(first + RequestID(index), consume request, limit, .member(batch, index: index)),
                        to: &inbox)
                }
                return nil
            }
            if let refusal { batch.refuseAll(refusal) }
        }

        /// Why a submission is refused before it reaches the owner; under the inbox's lock.
        private static func refusal(of inbox: Inbox) -> HTTP2Error? {
            if inbox.ownerExited { return HTTP2Error(.shuttingDown, detail: "the pool is shut down") }
            if Task.isCancelled { return HTTP2Error(.cancelled) }
            return nil
        }

        func cancel(_ id: RequestID) {
            inbox.withLock { inbox in
                if !inbox.ownerExited { append(.cancel(id), to: &inbox) }
            }
        }

        /// Cancels the requests of a batch (see ``submit(first:requests:timeout:batch:)``).
        func cancel(_ ids: Range<RequestID>) {
            inbox.withLock { inbox in
                guard !inbox.ownerExited else { return }
                for id in ids { append(.cancel(id), to: &inbox) }
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
