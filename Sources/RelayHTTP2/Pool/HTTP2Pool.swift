import CCurl
import Foundation
import Synchronization

/// A pool of HTTP/2 connections to one upstream identity, on one libcurl multi handle.
///
/// ### Overview
/// Every push leaves through a pool. A pool serves one origin with one credential identity (two APNs keys never
/// share a connection: APNs binds a connection to the first key used on it), keeps a few long-lived connections and
/// multiplexes many streams on each. Callers `send` from any task; the pool answers with the response that arrived
/// or a typed ``HTTP2Error``, never with success for a transfer that got no response.
///
/// ### Implementation
/// One dedicated thread owns the multi handle and every easy handle (libcurl-thread(3)); no curl handle is touched
/// from two threads. Callers append events to an inbox under a lock and call `curl_multi_wakeup`, the one multi call
/// that is safe from any thread. The owner thread drains the inbox, feeds the events to ``StateMachine`` and
/// performs its actions: starting and aborting transfers, and resuming each caller exactly once.
package final class HTTP2Pool: Sendable {
    package let configuration: HTTP2PoolConfiguration
    private let shared: Shared

    /// Makes the multi handle and starts the owner thread.
    package init(configuration: HTTP2PoolConfiguration = .init()) throws(HTTP2Error) {
        guard CurlGlobal.initialized else { throw HTTP2Error(.other, detail: "curl_global_init failed") }
        guard let multi = curl_multi_init() else { throw HTTP2Error(.other, detail: "curl_multi_init failed") }
        self.configuration = configuration
        let handle = MultiHandle(pointer: multi)
        self.shared = Shared(multi: handle)
        let shared = self.shared
        let thread = Thread {
            let owner = CurlOwner(multi: handle.pointer, configuration: configuration, shared: shared)
            owner.run()
        }
        thread.name = "pushrelay-curl"
        thread.start()
    }

    deinit {
        // A pool dropped without `shutdown` still ends its thread; nothing waits for it.
        shared.requestShutdown(deadline: .now, waiter: nil)
    }

    /// Sends a request and waits for its response.
    ///
    /// - Throws: ``HTTP2Error`` when no response arrived (timeout, reset, lost connection, shutdown, overload), or
    ///   `CancellationError` when the calling task was cancelled, in which case its transfer is removed.
    package func send(_ request: HTTP2Request) async throws -> HTTP2Response {
        let id = shared.reserve()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let timeout = request.timeout ?? configuration.requestTimeout
                    shared.submit(id, request: request, deadline: .now + timeout, continuation: continuation)
                }
            } onCancel: {
                shared.cancel(id)
            }
        } catch let error as HTTP2Error where error.kind == .cancelled {
            throw CancellationError()
        }
    }

    /// Graceful shutdown: admits nothing new, lets queued and in-flight requests finish for up to `gracePeriod`,
    /// then fails what is left and closes the connections. Returns once the owner thread has closed everything.
    package func shutdown(gracePeriod: Duration = .seconds(10)) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            shared.requestShutdown(deadline: .now + gracePeriod, waiter: waiter)
        }
    }

    /// A snapshot of the pool's counters.
    package var statistics: HTTP2PoolStatistics {
        shared.statistics.withLock { $0 }
    }
}

extension HTTP2Pool {
    /// The multi handle's address, kept for `curl_multi_wakeup` only.
    ///
    /// `@unchecked Sendable` is safe because other threads use the pointer for `curl_multi_wakeup` alone, which
    /// libcurl documents as callable from any thread, and only while holding `Shared.inbox`'s lock with
    /// `ownerExited == false`; the owner thread sets `ownerExited` under that lock before it cleans the handle up.
    struct MultiHandle: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
    }

    /// What callers and the owner thread exchange.
    enum Event: Sendable {
        case submit(RequestID, HTTP2Request, ContinuousClock.Instant, CheckedContinuation<HTTP2Response, any Error>)
        case cancel(RequestID)
        case shutdown(deadline: ContinuousClock.Instant)
    }

    /// The state shared between callers and the owner thread, each part behind its own lock.
    final class Shared: Sendable {
        struct Inbox {
            enum RequestState { case reserved, cancelledEarly, submitted }
            var events: [Event] = []
            var requests: [RequestID: RequestState] = [:]
            var nextID: RequestID = 1
            var ownerExited = false
            var shutdownWaiters: [CheckedContinuation<Void, Never>] = []

            /// Appends an event, waking the owner thread only when the inbox was empty: the owner takes every event
            /// at once, so a non-empty inbox means a wakeup is already on its way (one syscall per batch, not per
            /// request).
            mutating func append(_ event: Event, waking multi: MultiHandle) {
                events.append(event)
                if events.count == 1 { curl_multi_wakeup(multi.pointer) }
            }
        }

        let multi: MultiHandle
        let inbox = Mutex(Inbox())
        let statistics = Mutex(HTTP2PoolStatistics())

        init(multi: MultiHandle) {
            self.multi = multi
        }

        /// Takes an id before the request exists, so that a cancellation arriving first is not lost.
        func reserve() -> RequestID {
            inbox.withLock { inbox in
                let id = inbox.nextID
                inbox.nextID += 1
                inbox.requests[id] = .reserved
                return id
            }
        }

        func submit(
            _ id: RequestID,
            request: HTTP2Request,
            deadline: ContinuousClock.Instant,
            continuation: CheckedContinuation<HTTP2Response, any Error>
        ) {
            let refusal: HTTP2Error? = inbox.withLock { inbox in
                if inbox.ownerExited {
                    inbox.requests[id] = nil
                    return HTTP2Error(.shuttingDown, detail: "the pool is shut down")
                }
                if inbox.requests[id] == .cancelledEarly {
                    inbox.requests[id] = nil
                    return HTTP2Error(.cancelled)
                }
                inbox.requests[id] = .submitted
                inbox.append(.submit(id, request, deadline, continuation), waking: multi)
                return nil
            }
            if let refusal { continuation.resume(throwing: refusal) }
        }

        func cancel(_ id: RequestID) {
            inbox.withLock { inbox in
                switch inbox.requests[id] {
                case .reserved?:
                    inbox.requests[id] = .cancelledEarly
                case .submitted? where !inbox.ownerExited:
                    inbox.append(.cancel(id), waking: multi)
                default:
                    break
                }
            }
        }

        func requestShutdown(deadline: ContinuousClock.Instant, waiter: CheckedContinuation<Void, Never>?) {
            let exited = inbox.withLock { inbox in
                if inbox.ownerExited { return true }
                if let waiter { inbox.shutdownWaiters.append(waiter) }
                inbox.append(.shutdown(deadline: deadline), waking: multi)
                return false
            }
            if exited { waiter?.resume() }
        }

        /// The owner thread takes the pending events and forgets the requests it has finished.
        func exchange(finished: [RequestID]) -> [Event] {
            inbox.withLock { inbox in
                for id in finished { inbox.requests[id] = nil }
                let events = inbox.events
                inbox.events.removeAll(keepingCapacity: true)
                return events
            }
        }

        /// The owner thread is leaving: no more wakeups; wake the shutdown waiters.
        func ownerExiting() -> [Event] {
            let (waiters, events) = inbox.withLock { inbox in
                inbox.ownerExited = true
                let result = (inbox.shutdownWaiters, inbox.events)
                inbox.shutdownWaiters.removeAll()
                inbox.events.removeAll()
                inbox.requests.removeAll()
                return result
            }
            for waiter in waiters { waiter.resume() }
            return events
        }
    }
}
