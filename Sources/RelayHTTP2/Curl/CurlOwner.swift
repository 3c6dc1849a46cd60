import CCurl
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The curl backend's thread: the only code that touches the multi handle and its easy handles.
///
/// It loops: take the inbox's events → run them through the state machine → perform its actions →
/// `curl_multi_perform` → collect finished transfers → expire deadlines → `curl_multi_poll` until the next event,
/// socket activity, curl timer or deadline.
///
/// libcurl chooses connections itself (at most `maxConnections`, `CURLMOPT_MAX_HOST_CONNECTIONS`), so the machine
/// sees one connection carrying every stream of the pool: one stream until the first response (the server's
/// SETTINGS, and so its stream limit, arrive before it; APNs allows one stream on a new connection until a request
/// with a valid token succeeded), then `maxConnections × maxConcurrentStreams`.
final class CurlOwner {
    private let multi: UnsafeMutableRawPointer
    private let configuration: HTTP2PoolConfiguration
    private let shared: HTTP2Pool.Shared
    private var machine: HTTP2Pool.StateMachine
    private let clock = ContinuousClock()
    /// The one connection the machine sees, and whether its first response arrived.
    private var connection: HTTP2Pool.ConnectionID?
    private var warmedUp = false

    /// Makes the multi handle and starts the owner thread; returns what callers share with it.
    static func start(configuration: HTTP2PoolConfiguration) throws(HTTP2Error) -> HTTP2Pool.Shared {
        guard CurlGlobal.initialized else { throw HTTP2Error(.other, detail: "curl_global_init failed") }
        guard let pointer = curl_multi_init() else { throw HTTP2Error(.other, detail: "curl_multi_init failed") }
        let multi = MultiHandle(pointer: pointer)
        let shared = HTTP2Pool.Shared(wake: { curl_multi_wakeup(multi.pointer) })
        let thread = Thread {
            CurlOwner(multi: multi.pointer, configuration: configuration, shared: shared).run()
        }
        thread.name = "pushrelay-curl"
        thread.start()
        return shared
    }

    /// Every request the owner holds, queued or in libcurl.
    private var transfers: [HTTP2Pool.RequestID: CurlTransfer] = [:]
    private var requestByHandle: [UnsafeMutableRawPointer: HTTP2Pool.RequestID] = [:]
    /// Easy handles kept for reuse after `curl_easy_reset`, to spare an allocation per request.
    private var spareHandles: [UnsafeMutableRawPointer] = []
    private let sockets = SocketCounter()
    /// The inbox's events of this turn (swapped with the inbox's buffer, see ``HTTP2Pool/Shared/exchange(into:)``).
    private var events: [HTTP2Pool.Event] = []
    private var statistics = HTTP2PoolStatistics()
    private var closing = false

    private static let maxSpareHandles = 256
    private static let maxPollMilliseconds: Int32 = 1000
    private static let downloadBufferBytes = 4096
    /// libcurl's smallest upload buffer (its default is 64 KiB).
    private static let uploadBufferBytes = 16384

    init(multi: UnsafeMutableRawPointer, configuration: HTTP2PoolConfiguration, shared: HTTP2Pool.Shared) {
        self.multi = multi
        self.configuration = configuration
        self.shared = shared
        self.machine = HTTP2Pool.StateMachine(
            settings: .init(
                maxConnections: 1,
                maxConcurrentStreams: configuration.maxInFlight,
                maxQueued: configuration.maxQueued,
                streamsBeforeSettings: 1
            )
        )
        // Multiplex, never over-connect (libcurl 7.88.1 opens a connection per waiting transfer without a host
        // limit), keep a cache as large as the pool, and lift the client-side stream cap of 100.
        _ = relay_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = relay_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxConnections)
        _ = relay_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maxConnections)
        _ = relay_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, configuration.maxConnections + 2)
        _ = relay_curl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, configuration.maxConcurrentStreams)
    }

    func run() {
        while true {
            shared.exchange(into: &events)
            for event in events { handle(event) }
            events.removeAll(keepingCapacity: true)

            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            collectFinished()
            perform(machine.tick(now: clock.now))
            publishStatistics()
            if closing && transfers.isEmpty { break }

            var timeout = Self.maxPollMilliseconds
            if let deadline = machine.nextDeadline {
                let left = clock.now.duration(to: deadline)
                timeout = min(timeout, Int32(clamping: max(0, left.milliseconds + 1)))
            }
            _ = curl_multi_poll(multi, nil, 0, timeout, nil)
        }
        shutDown()
    }

    // MARK: - Events

    private func handle(_ event: HTTP2Pool.Event) {
        let now = clock.now
        switch event {
        case .submit(let id, let request, let timeout, let completion):
            let deadline = now + timeout
            let transfer = CurlTransfer(
                id: id,
                request: request,
                completion: completion,
                submitted: now,
                deadline: deadline,
                maxResponseBytes: configuration.maxResponseBytes
            )
            // libcurl opens a fresh connection itself (CURLOPT_FRESH_CONNECT): the machine's one connection stays,
            // and the machine only limits how often (a steady stream of such requests must not churn connections).
            transfer.freshConnection = request.freshConnection && machine.freshConnectionGranted(now: now)
            transfers[id] = transfer
            perform(machine.requestSubmitted(id, deadline: deadline, now: now))
        case .cancel(let id):
            perform(machine.requestCancelled(id, now: now))
        case .shutdown(let deadline):
            perform(machine.shutdownRequested(deadline: deadline, now: now))
        case .resolved:
            break  // libcurl resolves names itself.
        }
    }

    private func perform(_ actions: [HTTP2Pool.StateMachine.Action]) {
        for action in actions {
            switch action {
            case .openConnection(let id):
                // libcurl connects on its own; the machine's one connection is there at once.
                connection = id
                perform(machine.connectionEstablished(id, now: clock.now))
            case .startStream(let id, _):
                guard let transfer = transfers[id] else { continue }
                if let error = start(transfer) {
                    perform(machine.streamEnded(id, .failed(error), now: clock.now))
                }
            case .finishRequest(let id):
                if let transfer = transfers[id], let response = transfer.response {
                    finish(transfer, with: .success(response))
                }
            case .failRequest(let id, let error):
                if let transfer = transfers[id] {
                    detach(transfer)
                    finish(transfer, with: .failure(error))
                }
            case .cancelStream(let id, _, let error):
                if let transfer = transfers[id] {
                    detach(transfer)
                    finish(transfer, with: .failure(error))
                }
            case .sendPing, .closeConnection:
                break  // libcurl keeps and closes its connections itself.
            case .close:
                closing = true
            }
        }
    }

    // MARK: - Transfers

    /// Configures an easy handle for the transfer and adds it to the multi handle.
    private func start(_ transfer: CurlTransfer) -> HTTP2Error? {
        guard let easy = spareHandles.popLast() ?? makeHandle() else {
            return HTTP2Error(.other, detail: "curl_easy_init failed")
        }
        transfer.easy = easy
        transfer.started = clock.now
        requestByHandle[easy] = transfer.id
        if let error = configure(easy, for: transfer) {
            detach(transfer)
            return error
        }
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            requestByHandle[easy] = nil
            transfer.easy = nil
            recycle(easy, added: false)
            return HTTP2Error(.other, detail: "curl_multi_add_handle failed (\(added.rawValue))")
        }
        return nil
    }

    /// A new easy handle with the options every transfer of this pool shares. Handles are reused without
    /// `curl_easy_reset`, so these are set once; ``configure(_:for:)`` sets every option that differs per request.
    private func makeHandle() -> UnsafeMutableRawPointer? {
        guard let easy = curl_easy_init() else { return nil }
        var failure: CURLcode = CURLE_OK
        func check(_ code: CURLcode) { if failure == CURLE_OK && code != CURLE_OK { failure = code } }
        // HTTP/2 only: from libcurl 8.10 on, prior knowledge makes an https transfer offer nothing but h2 in ALPN,
        // so a server without HTTP/2 is never sent an HTTP/1.1 request (CURL_HTTP_VERSION_2TLS would fall back).
        check(relay_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2)))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
        check(
            relay_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout.milliseconds))
        )
        check(relay_curl_easy_setopt_long(easy, CURLOPT_MAXAGE_CONN, Int(configuration.maxIdleAge.seconds)))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_MAXLIFETIME_CONN, Int(configuration.maxLifetime.seconds)))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_DNS_CACHE_TIMEOUT, Int(configuration.dnsCacheTimeout.seconds)))
        // Upstream answers are small: a 4 KiB receive buffer instead of libcurl's 16 KiB keeps thousands of
        // streams in little memory. libcurl 7.88.1 refuses to change it once the handle has transferred.
        check(relay_curl_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, Self.downloadBufferBytes))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferBytes))
        if let caFile = configuration.caFile {
            check(relay_curl_easy_setopt_string(easy, CURLOPT_CAINFO, caFile))
        }
        // Only the configuration names a proxy. With one, every connection is an HTTP CONNECT tunnel through it and
        // TLS to the upstream runs inside (the proxy sees host names, never requests); credentials in its URL go as
        // Basic proxy authorisation. An empty NOPROXY makes it apply to every host whatever `no_proxy` says. Without
        // one, an empty PROXY switches off libcurl's reading of `https_proxy`, `all_proxy` and friends, so the
        // environment never redirects pushes.
        if let proxy = configuration.proxy {
            check(relay_curl_easy_setopt_string(easy, CURLOPT_PROXY, proxy))
            check(relay_curl_easy_setopt_long(easy, CURLOPT_HTTPPROXYTUNNEL, 1))
            check(relay_curl_easy_setopt_string(easy, CURLOPT_NOPROXY, ""))
        } else {
            check(relay_curl_easy_setopt_string(easy, CURLOPT_PROXY, ""))
        }
        check(relay_curl_easy_setopt_data_fn(easy, CURLOPT_WRITEFUNCTION, onBody))
        check(relay_curl_easy_setopt_data_fn(easy, CURLOPT_HEADERFUNCTION, onHeader))
        let counter = Unmanaged.passUnretained(sockets).toOpaque()
        check(relay_curl_easy_setopt_opensocket_fn(easy, onOpenSocket))
        check(relay_curl_easy_setopt_ptr(easy, CURLOPT_OPENSOCKETDATA, counter))
        check(relay_curl_easy_setopt_closesocket_fn(easy, onCloseSocket))
        check(relay_curl_easy_setopt_ptr(easy, CURLOPT_CLOSESOCKETDATA, counter))
        guard failure == CURLE_OK else {
            curl_easy_cleanup(easy)
            return nil
        }
        return easy
    }

    /// Sets every option that differs between requests.
    private func configure(_ easy: UnsafeMutableRawPointer, for transfer: CurlTransfer) -> HTTP2Error? {
        let request = transfer.request
        let remaining = clock.now.duration(to: transfer.deadline)
        var failure: CURLcode = CURLE_OK
        func check(_ code: CURLcode) { if failure == CURLE_OK && code != CURLE_OK { failure = code } }

        check(relay_curl_easy_setopt_string(easy, CURLOPT_URL, request.url))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, Int(remaining.milliseconds))))
        check(relay_curl_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, transfer.freshConnection ? 1 : 0))

        // Headers. libcurl labels POST bodies form-encoded unless told otherwise: an empty value removes its header.
        var list: UnsafeMutablePointer<curl_slist>?
        var hasContentType = false
        for header in request.headers {
            if header.name.lowercased() == "content-type" { hasContentType = true }
            list = curl_slist_append(list, "\(header.name): \(header.value)")
        }
        if !hasContentType { list = curl_slist_append(list, "Content-Type:") }
        transfer.headerList = list
        check(relay_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list))

        // Method and body; libcurl copies the body, so the request need not outlive this call.
        check(relay_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, nil))
        switch request.method {
        case "GET":
            check(relay_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1))
        default:
            check(relay_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
            if request.body.isEmpty {
                check(relay_curl_easy_setopt_string(easy, CURLOPT_COPYPOSTFIELDS, ""))
            } else {
                check(
                    request.body.withUnsafeBytes { bytes in
                        relay_curl_easy_setopt_ptr(
                            easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                    })
            }
            if request.method != "POST" {
                check(relay_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method))
            }
        }

        // Callbacks reach the transfer through an unretained pointer: `transfers` keeps it alive until the handle
        // leaves the multi handle.
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        check(relay_curl_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, context))
        check(relay_curl_easy_setopt_ptr(easy, CURLOPT_HEADERDATA, context))

        return failure == CURLE_OK ? nil : CurlResult.error(for: failure)
    }

    /// Reads every finished transfer and decides what it means.
    private func collectFinished() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            var handle: UnsafeMutableRawPointer?
            var result = CURLE_OK
            guard relay_curl_msg_done(message, &handle, &result) != 0, let easy = handle,
                let id = requestByHandle[easy], let transfer = transfers[id]
            else { continue }
            let outcome = outcome(of: transfer, easy: easy, result: result)
            detach(transfer)
            let now = clock.now
            switch outcome {
            case .success(let response):
                transfer.response = response
                if !warmedUp, let connection {
                    warmedUp = true
                    perform(
                        machine.settingsReceived(connection, maxConcurrentStreams: configuration.maxInFlight, now: now))
                }
                perform(machine.streamEnded(id, .answered, now: now))
            case .failure(let error):
                perform(machine.streamEnded(id, .failed(error), now: now))
            }
        }
    }

    /// A transfer counts as answered only with a non-zero response code over HTTP/2: libcurl 7.88.1 can report a
    /// reset or aborted stream as `CURLE_OK` with response code 0.
    private func outcome(of transfer: CurlTransfer, easy: UnsafeMutableRawPointer, result: CURLcode) -> Result<
        HTTP2Response, HTTP2Error
    > {
        var status = 0
        _ = relay_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var version = 0
        _ = relay_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        var connects = 0
        _ = relay_curl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
        statistics.connectionsOpened += connects

        if result == CURLE_WRITE_ERROR && transfer.bodyTooLarge {
            return .failure(
                HTTP2Error(.responseTooLarge, detail: "the response exceeded \(transfer.maxResponseBytes) bytes"))
        }
        guard result == CURLE_OK else {
            // The proxy's answer to this transfer's CONNECT; 0 when there was none (no proxy, or a reused tunnel).
            var connectStatus = 0
            if configuration.proxy != nil {
                _ = relay_curl_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &connectStatus)
            }
            return .failure(CurlResult.error(for: result, proxyConnectStatus: connectStatus))
        }
        guard status != 0 else {
            return .failure(HTTP2Error(.noResponse, detail: "the transfer ended without a response"))
        }
        guard version == Int(CURL_HTTP_VERSION_2_0) else {
            return .failure(HTTP2Error(.notHTTP2, detail: "the server answered over HTTP/1.x; HTTP/2 is required"))
        }
        let now = clock.now
        let started = transfer.started ?? transfer.submitted
        return .success(
            HTTP2Response(
                status: status,
                headers: transfer.headers,
                body: transfer.body,
                timings: .init(
                    queued: transfer.submitted.duration(to: started),
                    transfer: started.duration(to: now),
                    openedConnection: connects > 0
                )
            )
        )
    }

    /// Takes the transfer's handle out of the multi handle, keeping the handle for reuse.
    private func detach(_ transfer: CurlTransfer) {
        guard let easy = transfer.easy else { return }
        requestByHandle[easy] = nil
        transfer.easy = nil
        recycle(easy, added: true)
    }

    private func recycle(_ easy: UnsafeMutableRawPointer, added: Bool) {
        if added { _ = curl_multi_remove_handle(multi, easy) }
        if spareHandles.count < Self.maxSpareHandles {
            spareHandles.append(easy)
        } else {
            curl_easy_cleanup(easy)
        }
    }

    /// Resumes the caller, once, and forgets the transfer. The statistics are published first, so a caller that
    /// reads them after its answer sees its own request counted.
    private func finish(_ transfer: CurlTransfer, with outcome: Result<HTTP2Response, HTTP2Error>) {
        guard transfers.removeValue(forKey: transfer.id) != nil else { return }
        switch outcome {
        case .success(let response):
            statistics.completed += 1
            publishStatistics()
            transfer.completion.resume(returning: response)
        case .failure(let error):
            statistics.failed[error.kind, default: 0] += 1
            publishStatistics()
            transfer.completion.resume(throwing: error)
        }
    }

    private func publishStatistics() {
        statistics.connectionsOpen = sockets.open
        statistics.streamsInFlight = machine.inFlightCount
        statistics.queued = machine.queuedCount
        shared.publish(statistics)
    }

    /// Fails whatever arrived too late, frees every handle and closes the connections.
    private func shutDown() {
        let late = HTTP2Error(.shuttingDown, detail: "the pool is shut down")
        for transfer in Array(transfers.values) {
            detach(transfer)
            finish(transfer, with: .failure(late))
        }
        let (lateEvents, waiters) = shared.ownerExiting()
        for event in lateEvents {
            if case .submit(_, _, _, let completion) = event { completion.resume(throwing: late) }
        }
        for easy in spareHandles { curl_easy_cleanup(easy) }
        spareHandles.removeAll()
        curl_multi_cleanup(multi)
        publishStatistics()
        // Last: `shutdown()` returns with the connections closed and their counters published.
        for waiter in waiters { waiter.resume() }
    }
}

// Thread-confined: made and used on the pool's curl thread only.
@available(*, unavailable)
extension CurlOwner: Sendable {}

/// The multi handle's address, kept for `curl_multi_wakeup` only.
///
/// `@unchecked Sendable` is safe because other threads use the pointer for `curl_multi_wakeup` alone, which libcurl
/// documents as callable from any thread, and only through `HTTP2Pool.Shared`'s wake-up, which runs under the inbox's
/// lock while `ownerExited == false`; the owner thread sets `ownerExited` under that lock before it cleans the handle
/// up.
struct MultiHandle: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer
}

/// Counts the sockets libcurl opens and closes, for the open-connections statistic. Used on the curl thread only.
final class SocketCounter {
    var open = 0
}

// MARK: - C callbacks (capture nothing; state arrives through the context pointer)

private let onBody: relay_curl_data_fn = { bytes, size, count, context in
    guard let bytes, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.appendBody(UnsafeRawBufferPointer(start: bytes, count: size * count))
}

private let onHeader: relay_curl_data_fn = { bytes, size, count, context in
    guard let bytes, let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    transfer.appendHeaderLine(UnsafeRawBufferPointer(start: bytes, count: size * count))
    return size * count
}

private let onOpenSocket: relay_curl_opensocket_fn = { context, _, address in
    guard let address else { return relay_curl_socket_bad() }
    let fd = socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
    if fd >= 0, let context {
        Unmanaged<SocketCounter>.fromOpaque(context).takeUnretainedValue().open += 1
    }
    return fd
}

private let onCloseSocket: relay_curl_closesocket_fn = { context, fd in
    if let context {
        Unmanaged<SocketCounter>.fromOpaque(context).takeUnretainedValue().open -= 1
    }
    return close(fd)
}

extension Duration {
    /// Whole milliseconds, rounded toward zero, saturating at the limits of `Int64`.
    var milliseconds: Int64 { wholeUnits(perSecond: 1_000) }

    /// Whole seconds, rounded down.
    var seconds: Int64 { components.seconds }

    /// Whole units of which `perSecond` (a divisor of 10^18) make a second, rounded toward zero, saturating at the
    /// limits of `Int64`.
    func wholeUnits(perSecond: Int64) -> Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: perSecond)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (sum, overflowAgain) = scaled.addingReportingOverflow(attoseconds / (1_000_000_000_000_000_000 / perSecond))
        return overflowAgain ? (seconds < 0 ? .min : .max) : sum
    }
}
