package import Logging
import Synchronization

/// A pool of HTTP/2 connections to one upstream identity.
///
/// ### Overview
/// Every push leaves through a pool. A pool serves one origin with one credential identity (two APNs keys never
/// share a connection: APNs binds a connection to the first key used on it), keeps a few long-lived connections and
/// multiplexes many streams on each. Callers `send` from any task; the pool answers with the response that arrived
/// or a typed ``HTTP2Error``, never with success for a stream that got no whole response.
///
/// ### Implementation
/// The decisions are the pure ``StateMachine``'s; a backend owns the I/O and runs the machine on one thread:
/// - ``HTTP2Backend/nghttp2`` (the default): an ``NGHTTP2EventLoop`` thread, shared by many pools, owns the sockets,
///   TLS objects and nghttp2 sessions of this pool's connections (`NGHTTP2PoolDriver`);
/// - ``HTTP2Backend/curl``: a thread of the pool's own owns a libcurl multi handle (`CurlOwner`); libcurl chooses the
///   connections, so the machine sees it as one connection with every stream of the pool.
/// Callers reach the owner through ``Shared``: events appended under a lock, and one wake-up per batch.
package final class HTTP2Pool: Sendable {
    package let configuration: HTTP2PoolConfiguration
    private let shared: Shared

    /// Starts the pool's owner on the backend the configuration names (``HTTP2Backend/curl`` when a proxy is set).
    /// The upstream is the origin of the first request's URL; every request of a pool goes to that origin.
    package init(
        configuration: HTTP2PoolConfiguration = .init(),
        logger: Logger = Logger(label: "pushrelay.http2")
    ) throws(HTTP2Error) {
        self.configuration = configuration
        if configuration.backend == .curl || configuration.proxy != nil {
            self.shared = try CurlOwner.start(configuration: configuration)
        } else {
            self.shared = try NGHTTP2EventLoop.next().startPool(configuration: configuration, logger: logger)
        }
    }

    deinit {
        // A pool dropped without `shutdown` still ends its owner; nothing waits for it.
        shared.requestShutdown(deadline: .now, waiter: nil)
    }

    /// Sends a request and waits for its response.
    ///
    /// - Throws: ``HTTP2Error`` when no whole response arrived (timeout, reset, lost connection, shutdown,
    ///   overload), or `CancellationError` when the calling task was cancelled, in which case its stream is reset.
    package func send(_ request: consuming HTTP2Request) async throws -> HTTP2Response {
        let id = shared.reserve()
        let timeout = request.timeout ?? configuration.requestTimeout
        // Moved through to the pool's inbox (see ``Shared/submit(_:request:timeout:continuation:)``): the closure
        // runs once and takes the request out of the optional, which a closure can do where it cannot consume.
        var request = Optional(consume request)
        do {
            return try await withTaskCancellationHandler {
                try await withUnsafeThrowingContinuation { continuation in
                    guard let taken = request.take() else {
                        continuation.resume(throwing: HTTP2Error(.other, detail: "a request was submitted twice"))
                        return
                    }
                    shared.submit(id, request: consume taken, timeout: timeout, continuation: continuation)
                }
            } onCancel: {
                shared.cancel(id)
            }
        } catch let error as HTTP2Error where error.kind == .cancelled {
            throw CancellationError()
        }
    }

    /// Sends requests together and waits until every one has ended; one result per request, in order.
    ///
    /// Each request is a stream of its own, exactly as if sent with ``send(_:)``, with the same errors (a cancelled
    /// one fails with `CancellationError`); they only reach the owner under one lock and one wake-up, and the caller
    /// is resumed once, when the last has ended, rather than once per request. For senders with many requests ready
    /// at once (the notifications of one relay request to APNs or FCM), whose caller needs them all.
    package func send(all requests: consuming [HTTP2Request]) async -> [Result<HTTP2Response, any Error>] {
        let count = requests.count
        guard count > 0 else { return [] }
        let first = shared.reserve(count)
        let ids = first..<(first + RequestID(count))
        // Moved through to the inbox, as in ``send(_:)``.
        var requests = consume requests
        let results = await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                shared.submit(
                    first: first, requests: &requests,
                    timeout: { $0.timeout ?? self.configuration.requestTimeout },
                    batch: Batch(count: count, continuation: continuation))
            }
        } onCancel: {
            shared.cancel(ids)
        }
        return results.map { result in
            result.mapError { error in
                if let error = error as? HTTP2Error, error.kind == .cancelled { return CancellationError() }
                return error
            }
        }
    }

    /// Graceful shutdown: admits nothing new, lets queued and in-flight requests finish for up to `gracePeriod`,
    /// then fails what is left and closes the connections. Returns once the owner has closed everything and the
    /// pool refuses new requests: a ``send(_:)`` after it throws ``HTTP2Error`` `shuttingDown` at once (see
    /// ``Shared/ownerExiting()``).
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
