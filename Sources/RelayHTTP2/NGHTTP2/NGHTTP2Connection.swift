import CNGHTTP2

#if canImport(Glibc)
import Glibc
#endif

/// One upstream connection of the nghttp2 backend: a non-blocking socket, its OpenSSL object and its nghttp2 client
/// session, confined to the event loop that owns its pool.
///
/// ### Overview
/// The connection performs I/O and reports what happened; it decides nothing. nghttp2's callbacks run inside
/// `nghttp2_session_mem_recv` and `nghttp2_session_mem_send`; they only record ``Report``s, which the pool's driver
/// takes afterwards (``takeReports()``) and feeds to the state machine, so nothing is submitted from inside a callback.
///
/// ### Implementation
/// - Reading: every `SSL_read` chunk goes to `nghttp2_session_mem_recv` whole, until OpenSSL wants more bytes.
/// - Writing: ``flush()`` collects everything nghttp2 has to send into one buffer and hands it to `SSL_write` in one
///   call (PROTOCOLS.md §7: one write per connection per loop turn, whatever the number of streams); what the socket
///   does not take waits for `EPOLLOUT`.
/// - Streams: each request's ``NGHTTP2Stream`` sits in ``streams`` by stream id from submission to close; a stream
///   counts as answered only when its response ended with END_STREAM, and then whatever follows (RST_STREAM(NO_ERROR)
///   after an early answer) does not change that.
///
/// Exclusivity: as in ``NGHTTP2PoolDriver``, the properties marked `@exclusivity(unchecked)` skip the runtime's
/// checks. nghttp2 calls back only from inside `nghttp2_session_mem_recv` and `nghttp2_session_mem_send`, and no
/// access to these properties is in progress around those calls (`nghttp2_submit_request`, made while the header
/// block is read, calls nothing back).
final class NGHTTP2Connection {
    enum Phase: Equatable {
        case resolving
        case connecting
        case handshaking
        case open
        case closed
    }

    /// What the connection saw, in order, for the driver to act on.
    enum Report {
        case established
        case settings(maxConcurrentStreams: Int?)
        case goAway(lastStreamID: Int32, errorCode: UInt32, debugData: String)
        case pingAcknowledged
        /// The whole response arrived while the request body was still going out (RFC 9113 §8.1): the answer counts
        /// now, whatever happens to the stream after it. Its close is reported as well.
        case responseEnded(NGHTTP2Stream)
        /// The response outgrew `maxResponseBytes`; the rest of it is dropped. The state machine decides the reset
        /// (``HTTP2Pool/StateMachine/responseTooLarge(_:limit:now:)``), so it is submitted once, outside nghttp2's
        /// callbacks, and never again by a cancellation or deadline that arrives before the stream's close.
        case responseTooLarge(NGHTTP2Stream)
        case streamClosed(NGHTTP2Stream, HTTP2Pool.StreamEnd)
        case failed(HTTP2Error)
    }

    let id: HTTP2Pool.ConnectionID
    /// The event loop's name for the socket in epoll.
    let token: UInt64
    let origin: UpstreamOrigin
    private(set) var phase: Phase = .resolving
    private var fd: Int32 = -1
    private var ssl: OpaquePointer?
    private var session: OpaquePointer?
    private let epollFD: Int32
    private let tls: TLSClientContext
    private let maxResponseBytes: Int

    /// Streams from submission to close, by stream id.
    @exclusivity(unchecked) private(set) var streams: [Int32: NGHTTP2Stream] = [:] {
        didSet { lastLookedUp = nil }
    }
    /// The stream the last callback asked for: a response's header and data callbacks come one after another for
    /// the same stream, so most look-ups skip the hash.
    @exclusivity(unchecked) private var lastLookedUp: NGHTTP2Stream?
    @exclusivity(unchecked) private var reports: [Report] = []
    /// Reused for each request's header block (see ``HeaderBlock/fill(request:authority:path:)``).
    @exclusivity(unchecked) private var headerBlock = HeaderBlock()
    @exclusivity(unchecked) private var output: [UInt8] = []
    private var outputOffset = 0
    private var watchingWrites = false
    /// Whether any frame arrived since the driver last asked.
    private(set) var receivedFrames = false
    private(set) var pingOutstanding = false
    /// Streams opened on this connection, to tell the first.
    private(set) var streamsStarted = 0
    /// RST_STREAM frames this connection submitted.
    private(set) var resetsSubmitted = 0

    init(
        id: HTTP2Pool.ConnectionID,
        token: UInt64,
        origin: UpstreamOrigin,
        epollFD: Int32,
        tls: TLSClientContext,
        maxResponseBytes: Int
    ) {
        self.id = id
        self.token = token
        self.origin = origin
        self.epollFD = epollFD
        self.tls = tls
        self.maxResponseBytes = maxResponseBytes
    }

    deinit {
        release()
    }

    /// Takes what the connection saw since the last call.
    func takeReports() -> [Report] {
        defer { reports.removeAll(keepingCapacity: true) }
        return reports
    }

    func takeReceivedFrames() -> Bool {
        defer { receivedFrames = false }
        return receivedFrames
    }

    // MARK: - Connecting

    /// Starts a non-blocking TCP connect to `address`.
    func connect(to address: SocketAddressBytes) {
        guard phase == .resolving else { return }
        fd = socket(
            address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0)
        guard fd >= 0 else { return fail(HTTP2Error(.connectFailed, detail: "socket: \(Self.errnoText())")) }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, socklen_t(MemoryLayout<Int32>.size))
        let result = address.withSockAddr { Glibc.connect(fd, $0, $1) }
        guard result == 0 || errno == EINPROGRESS else {
            return fail(
                HTTP2Error(.connectFailed, detail: "connect to \(origin.host):\(origin.port): \(Self.errnoText())"))
        }
        phase = .connecting
        guard relay_epoll_control(epollFD, EPOLL_CTL_ADD, fd, relay_epoll_in | relay_epoll_out, token) == 0 else {
            return fail(HTTP2Error(.connectFailed, detail: "epoll_ctl: \(Self.errnoText())"))
        }
        watchingWrites = true
    }

    /// The look-up failed.
    func resolutionFailed(_ error: HTTP2Error) {
        fail(error)
    }

    /// epoll reported the socket: continue whatever the connection is doing.
    func socketReady(flags: UInt32, readBuffer: UnsafeMutableRawBufferPointer) {
        switch phase {
        case .connecting:
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0, flags & relay_epoll_err == 0 else {
                let text = String(cString: strerror(error == 0 ? ECONNREFUSED : error))
                return fail(HTTP2Error(.connectFailed, detail: "connect to \(origin.host):\(origin.port): \(text)"))
            }
            startTLS()
        case .handshaking:
            continueHandshake()
            // The handshake's last read may have taken the server's first frames too (read-ahead): read them now,
            // since no epoll event will come for bytes already out of the socket.
            if phase == .open, let ssl, SSL_has_pending(ssl) == 1 { readAvailable(into: readBuffer) }
        case .open:
            if flags & (relay_epoll_in | relay_epoll_hup | relay_epoll_err) != 0 { readAvailable(into: readBuffer) }
            if phase == .open, flags & relay_epoll_out != 0 {
                writeOutput()
                // What nghttp2 held back while the socket was full goes out now.
                if outputOffset >= output.count { flush() }
            }
        case .resolving, .closed:
            break
        }
    }

    private func startTLS() {
        guard let ssl = SSL_new(tls.pointer) else {
            return fail(HTTP2Error(.tls, detail: "SSL_new failed: \(TLSClientContext.lastError())"))
        }
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        if origin.isIPLiteral {
            // No SNI for an address; the certificate must name the address itself.
            _ = relay_ssl_set_expected_ip(ssl, origin.host)
        } else {
            _ = relay_ssl_set_server_name(ssl, origin.host)
            _ = SSL_set1_host(ssl, origin.host)
        }
        SSL_set_connect_state(ssl)
        phase = .handshaking
        continueHandshake()
    }

    private func continueHandshake() {
        guard let ssl else { return }
        let result = SSL_do_handshake(ssl)
        if result == 1 { return handshakeFinished(ssl) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: watchWrites(false)
        case SSL_ERROR_WANT_WRITE: watchWrites(true)
        default:
            let verify = SSL_get_verify_result(ssl)
            let detail =
                verify == X509_V_OK
                ? "TLS handshake with \(origin.host) failed: \(TLSClientContext.lastError())"
                : "certificate of \(origin.host) not trusted: \(String(cString: X509_verify_cert_error_string(verify)))"
            ERR_clear_error()
            fail(HTTP2Error(.tls, detail: detail))
        }
    }

    private func handshakeFinished(_ ssl: OpaquePointer) {
        var protocolName: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &protocolName, &length)
        let selected = protocolName.map {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(length)), as: UTF8.self)
        }
        guard selected == "h2" else {
            return fail(HTTP2Error(.notHTTP2, detail: "\(origin.host) did not select h2 in ALPN; HTTP/2 is required"))
        }
        guard let session = Self.makeSession(for: self) else {
            return fail(HTTP2Error(.other, detail: "nghttp2_session_client_new failed"))
        }
        self.session = session
        // The client preface and our SETTINGS go out with the first flush: no server push, a 1 MiB stream window and
        // a 16 MiB connection window, so responses never wait for a WINDOW_UPDATE.
        _ = relay_nghttp2_submit_client_settings(session, UInt32(Self.streamWindow))
        _ = nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Self.connectionWindow)
        phase = .open
        watchWrites(false)
        reports.append(.established)
    }

    // MARK: - Streams

    /// Submits a request as a new stream. Returns the stream id, or the nghttp2 error code.
    func submit(_ stream: NGHTTP2Stream) -> Result<Int32, HTTP2Error> {
        guard phase == .open, let session else {
            return .failure(HTTP2Error(.connectionLost, detail: "the connection is not open"))
        }
        headerBlock.fill(request: stream.request, authority: origin.authority, path: stream.path)
        var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: onReadBody)
        let hasBody = !stream.request.body.isEmpty
        let streamID = headerBlock.withNameValuePairs { pairs, count in
            withUnsafePointer(to: &provider) { providerPointer in
                nghttp2_submit_request(session, nil, pairs, count, hasBody ? providerPointer : nil, nil)
            }
        }
        guard streamID > 0 else {
            if streamID == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue {
                return .failure(HTTP2Error(.protocolError, detail: "stream ids exhausted"))
            }
            let text = String(cString: nghttp2_strerror(streamID))
            return .failure(HTTP2Error(.invalidRequest, detail: "nghttp2_submit_request: \(text)"))
        }
        streams[streamID] = stream
        stream.streamID = streamID
        streamsStarted += 1
        return .success(streamID)
    }

    /// Resets a stream the caller gave up on (cancelled, timed out, response too large), once; its close is not
    /// reported. A stream already closed, or already reset, is not reset (again).
    func cancel(streamID: Int32) {
        guard streams.removeValue(forKey: streamID) != nil, let session, phase == .open else { return }
        if nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_CANCEL.rawValue) == 0
        {
            resetsSubmitted += 1
        }
    }

    /// The driver counted the resets so far.
    func resetsCounted() {
        resetsSubmitted = 0
    }

    func ping() {
        guard let session, phase == .open else { return }
        if nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil) == 0 { pingOutstanding = true }
    }

    // MARK: - Reading and writing

    private func readAvailable(into buffer: UnsafeMutableRawBufferPointer) {
        guard let ssl, let session, let base = buffer.baseAddress else { return }
        while phase == .open {
            let count = SSL_read(ssl, base, Int32(clamping: buffer.count))
            if count > 0 {
                let consumed = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), Int(count))
                if consumed < 0 {
                    let text = String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: consumed)))
                    return fail(HTTP2Error(.protocolError, detail: "HTTP/2 error from \(origin.host): \(text)"))
                }
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ:
                return
            case SSL_ERROR_WANT_WRITE:
                watchWrites(true)
                return
            case SSL_ERROR_ZERO_RETURN:
                return fail(HTTP2Error(.connectionLost, detail: "\(origin.host) closed the connection"))
            default:
                let detail = errno == 0 ? TLSClientContext.lastError() : Self.errnoText()
                ERR_clear_error()
                return fail(HTTP2Error(.connectionLost, detail: "reading from \(origin.host): \(detail)"))
            }
        }
    }

    /// Sends everything nghttp2 has to send, in one TLS write.
    func flush() {
        guard phase == .open, let session else { return }
        // While the socket has not taken the last write, new frames stay in nghttp2, whose own limits then apply
        // (a peer that stops reading cannot make this buffer grow).
        guard outputOffset >= output.count else { return }
        while true {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 {
                let text = String(cString: nghttp2_strerror(Int32(truncatingIfNeeded: count)))
                return fail(HTTP2Error(.protocolError, detail: "nghttp2_session_mem_send: \(text)"))
            }
            guard count > 0, let data else { break }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
        }
        writeOutput()
    }

    private func writeOutput() {
        guard let ssl else { return }
        while outputOffset < output.count {
            let written = output.withUnsafeBytes { bytes in
                SSL_write(ssl, bytes.baseAddress! + outputOffset, Int32(clamping: bytes.count - outputOffset))
                // `output` is non-empty here (outputOffset < count), so baseAddress is non-nil.
            }
            if written > 0 {
                outputOffset += Int(written)
                continue
            }
            switch SSL_get_error(ssl, written) {
            case SSL_ERROR_WANT_WRITE, SSL_ERROR_WANT_READ:
                watchWrites(true)
                return
            default:
                let detail = errno == 0 ? TLSClientContext.lastError() : Self.errnoText()
                ERR_clear_error()
                return fail(HTTP2Error(.connectionLost, detail: "writing to \(origin.host): \(detail)"))
            }
        }
        output.removeAll(keepingCapacity: output.capacity <= Self.keptOutputCapacity)
        outputOffset = 0
        watchWrites(false)
    }

    private func watchWrites(_ on: Bool) {
        guard on != watchingWrites, fd >= 0 else { return }
        watchingWrites = on
        _ = relay_epoll_control(
            epollFD, EPOLL_CTL_MOD, fd, on ? relay_epoll_in | relay_epoll_out : relay_epoll_in, token)
    }

    // MARK: - Closing

    /// Closes the connection; `graceful` sends GOAWAY(NO_ERROR) first (best effort). Nothing more is reported.
    func close(graceful: Bool) {
        guard phase != .closed else { return }
        if graceful, phase == .open, let session {
            _ = nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
            flush()
        }
        phase = .closed
        reports.removeAll()
        streams.removeAll()
        release()
    }

    /// Something failed: report it once; the driver then closes the connection.
    private func fail(_ error: HTTP2Error) {
        guard phase != .closed else { return }
        phase = .closed
        reports.append(.failed(error))
        release()
    }

    private func release() {
        if let session {
            self.session = nil
            nghttp2_session_del(session)
        }
        if let ssl {
            self.ssl = nil
            SSL_free(ssl)
        }
        if fd >= 0 {
            _ = relay_epoll_control(epollFD, EPOLL_CTL_DEL, fd, 0, token)
            Glibc.close(fd)
            fd = -1
        }
    }

    // MARK: - nghttp2 callbacks (recorded, never acted on inside nghttp2)

    private func stream(_ streamID: Int32) -> NGHTTP2Stream? {
        if let last = lastLookedUp, last.streamID == streamID { return last }
        let found = streams[streamID]
        lastLookedUp = found
        return found
    }

    fileprivate func headerReceived(
        streamID: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>
    ) {
        guard let stream = stream(streamID) else { return }
        receivedFrames = true
        if name.count == 7 && name.elementsEqual(":status".utf8) {
            // A new :status starts a new header block (after an informational response).
            stream.status = Self.decimal(value)
            stream.headers.removeAll()
            return
        }
        // nghttp2 hands over names in lowercase (it refuses responses with uppercase ones).
        stream.headers.append(name: name, value: value)
    }

    fileprivate func dataReceived(streamID: Int32, bytes: UnsafeBufferPointer<UInt8>) {
        receivedFrames = true
        guard let stream = stream(streamID), !stream.tooLarge else { return }
        guard stream.responseBody.count + bytes.count <= maxResponseBytes else {
            stream.tooLarge = true
            reports.append(.responseTooLarge(stream))
            return
        }
        stream.responseBody.append(contentsOf: bytes)
    }

    fileprivate func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) {
        receivedFrames = true
        let header = frame.pointee.hd
        let type = UInt32(header.type)
        let flags = UInt32(header.flags)
        switch type {
        case NGHTTP2_HEADERS.rawValue, NGHTTP2_DATA.rawValue:
            if flags & NGHTTP2_FLAG_END_STREAM.rawValue != 0, let stream = stream(header.stream_id) {
                stream.complete = true
                // Usually the request had ended and nghttp2 closes the stream right after this callback. If it had
                // not, the server may reset the stream, read on, or stop granting window: the answer is whole now.
                if stream.status >= 200, !stream.tooLarge, let session,
                    nghttp2_session_get_stream_local_close(session, header.stream_id) == 0
                {
                    reports.append(.responseEnded(stream))
                }
            }
        case NGHTTP2_SETTINGS.rawValue:
            guard flags & NGHTTP2_FLAG_ACK.rawValue == 0, let session else { return }
            let limit = nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
            reports.append(.settings(maxConcurrentStreams: limit == UInt32.max ? nil : Int(limit)))
        case NGHTTP2_GOAWAY.rawValue:
            let goAway = frame.pointee.goaway
            var debug = ""
            if let data = goAway.opaque_data, goAway.opaque_data_len > 0 {
                let bytes = UnsafeBufferPointer(
                    start: data, count: min(goAway.opaque_data_len, Self.maxDebugDataLogged))
                debug = String(
                    decoding: bytes.map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            }
            reports.append(.goAway(lastStreamID: goAway.last_stream_id, errorCode: goAway.error_code, debugData: debug))
        case NGHTTP2_PING.rawValue:
            if flags & NGHTTP2_FLAG_ACK.rawValue != 0 {
                pingOutstanding = false
                reports.append(.pingAcknowledged)
            }
        default:
            break
        }
    }

    fileprivate func frameNotSent(_ frame: UnsafePointer<nghttp2_frame>) {
        if UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue, let stream = streams[frame.pointee.hd.stream_id] {
            stream.notSent = true
        }
    }

    fileprivate func streamClosed(streamID: Int32, errorCode: UInt32) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        let end: HTTP2Pool.StreamEnd
        if stream.tooLarge {
            end = .failed(HTTP2Error(.responseTooLarge, detail: "the response exceeded \(maxResponseBytes) bytes"))
        } else if stream.complete && stream.status >= 200 {
            end = .answered
        } else if stream.notSent || errorCode == NGHTTP2_REFUSED_STREAM.rawValue {
            end = .notProcessed
        } else {
            let name = String(cString: nghttp2_http2_strerror(errorCode))
            end = .failed(
                HTTP2Error(.streamReset, detail: "stream reset (\(name)) before the whole response; outcome unknown"))
        }
        reports.append(.streamClosed(stream, end))
    }

    fileprivate func readBody(
        streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, capacity: Int, flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        guard let stream = stream(streamID) else { return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue) }
        let body = stream.request.body
        let count = min(capacity, body.count - stream.bodyOffset)
        body.withUnsafeBufferPointer { body in
            if count > 0, let base = body.baseAddress {
                buffer.update(from: base + stream.bodyOffset, count: count)
            }
        }
        stream.bodyOffset += count
        if stream.bodyOffset == body.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }

    // MARK: - Helpers

    private static let streamWindow = 1 << 20
    private static let connectionWindow: Int32 = 1 << 24
    /// Output buffers larger than this are released after use rather than kept.
    private static let keptOutputCapacity = 1 << 20
    private static let maxDebugDataLogged = 256

    private static func decimal(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var value = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return 0 }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }

    private static func makeSession(for connection: NGHTTP2Connection) -> OpaquePointer? {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return nil }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrame)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSent)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        var session: OpaquePointer?
        // The session's user data is the connection, unretained: the connection deletes the session in
        // `release()` before it goes away, so no callback outlives it.
        let context = Unmanaged.passUnretained(connection).toOpaque()
        guard nghttp2_session_client_new(&session, callbacks, context) == 0 else { return nil }
        return session
    }
}

// Confined to its event loop's thread, like every OpenSSL and nghttp2 object it holds.
@available(*, unavailable)
extension NGHTTP2Connection: Sendable {}

/// One request from submission until its caller is resumed: what to send, where its caller waits, and the state of
/// its current stream on the wire (a request the server did not process is sent again on a new stream). One object
/// per request, event-loop confined. Its `@exclusivity(unchecked)` buffers are written only by the nghttp2 callbacks
/// of its connection, one at a time (see ``NGHTTP2Connection``).
final class NGHTTP2Stream {
    let requestID: HTTP2Pool.RequestID
    let request: HTTP2Request
    let path: String
    let completion: HTTP2Pool.Completion
    /// When the request was taken and when its current stream started, as the pool's state machine counts time.
    let submitted: Moment
    var started: Moment?
    var openedConnection = false

    // The current stream.
    var bodyOffset = 0
    var streamID: Int32 = 0
    var status = 0
    @exclusivity(unchecked) var headers = FieldBuffer()
    @exclusivity(unchecked) var responseBody: [UInt8] = []
    /// The response ended with END_STREAM.
    var complete = false
    /// The caller has its answer: the response ended before the request body did
    /// (``NGHTTP2Connection/Report/responseEnded(_:)``). Set once; the request is never sent again after it.
    var answered = false
    /// nghttp2 could not send the request's HEADERS (after GOAWAY, or at a limit): the server never saw it.
    var notSent = false
    var tooLarge = false

    init(
        requestID: HTTP2Pool.RequestID,
        request: HTTP2Request,
        path: String,
        completion: HTTP2Pool.Completion,
        submitted: Moment
    ) {
        self.requestID = requestID
        self.request = request
        self.path = path
        self.completion = completion
        self.submitted = submitted
    }

    /// Clears what an earlier stream of this request left (it was not processed, and goes out again).
    func prepareForSubmission() {
        guard streamID != 0 else { return }
        bodyOffset = 0
        streamID = 0
        status = 0
        headers.removeAll()
        responseBody.removeAll()
        complete = false
        notSent = false
        tooLarge = false
    }
}

@available(*, unavailable)
extension NGHTTP2Stream: Sendable {}

/// A request's header fields as nghttp2 name/value pairs: the pseudo-headers first, names in lowercase (HTTP/2
/// requires it), connection-specific fields left out (RFC 9113 §8.2.2), `content-length` added for a body.
struct HeaderBlock {
    private var storage: [UInt8] = []
    private var ranges: [(name: Range<Int>, value: Range<Int>)] = []

    init() {
        storage.reserveCapacity(512)
        ranges.reserveCapacity(16)
    }

    /// Replaces the fields with a request's, keeping the buffers: one block serves every request of a connection,
    /// since nghttp2 copies the fields when the request is submitted.
    mutating func fill(request: HTTP2Request, authority: String, path: String) {
        storage.removeAll(keepingCapacity: true)
        ranges.removeAll(keepingCapacity: true)
        add(":method", request.method)
        add(":scheme", "https")
        add(":authority", authority)
        add(":path", path)
        var hasLength = false
        for header in request.headers {
            // HTTP/2 field names are lowercase; most callers already write them so, and lowercasing costs.
            let name = header.name.utf8.contains { (65...90).contains($0) } ? header.name.lowercased() : header.name
            switch Self.kind(of: name) {
            case .connectionSpecific: continue
            case .contentLength: hasLength = true
            case .other: break
            }
            add(name, header.value)
        }
        if !hasLength && !request.body.isEmpty { addContentLength(request.body.count) }
    }

    private enum FieldKind { case connectionSpecific, contentLength, other }

    /// What a lowercase field name is to the block. Compared by length first: a request carries a few fields, none
    /// usually of these lengths, and each string comparison that fails is a call into the standard library (`perf`,
    /// `relay-bench transport`: a tenth of the block's cost on the loop thread).
    private static func kind(of name: String) -> FieldKind {
        switch name.utf8.count {
        case 2: return name == "te" ? .connectionSpecific : .other
        case 4: return name == "host" ? .connectionSpecific : .other
        case 7: return name == "upgrade" ? .connectionSpecific : .other
        case 10: return name == "connection" || name == "keep-alive" ? .connectionSpecific : .other
        case 14: return name == "content-length" ? .contentLength : .other
        case 16: return name == "proxy-connection" ? .connectionSpecific : .other
        case 17: return name == "transfer-encoding" ? .connectionSpecific : .other
        default: return .other
        }
    }

    private mutating func add(_ name: String, _ value: String) {
        let nameStart = storage.count
        append(name)
        let valueStart = storage.count
        append(value)
        ranges.append((nameStart..<valueStart, valueStart..<storage.count))
    }

    /// `content-length` with the decimal digits written in place, not through a `String`.
    private mutating func addContentLength(_ length: Int) {
        let nameStart = storage.count
        append("content-length")
        let valueStart = storage.count
        var scale = 1
        while scale <= length / 10 { scale *= 10 }
        repeat {
            storage.append(UInt8(ascii: "0") + UInt8(length / scale % 10))
            scale /= 10
        } while scale > 0
        ranges.append((nameStart..<valueStart, valueStart..<storage.count))
    }

    /// Appends a string's UTF-8 bytes in one copy: a native string's bytes are contiguous (small strings' too), and
    /// appending a buffer is a `memcpy`, where appending the UTF-8 view goes through the view's generic copy.
    private mutating func append(_ text: String) {
        let copied: Void? = text.utf8.withContiguousStorageIfAvailable { storage.append(contentsOf: $0) }
        if copied == nil { storage.append(contentsOf: text.utf8) }
    }

    /// Calls `body` with the pairs; nghttp2 copies them during the call (no `NO_COPY` flags).
    func withNameValuePairs<Result>(_ body: (UnsafeMutablePointer<nghttp2_nv>, Int) -> Result) -> Result {
        storage.withUnsafeBufferPointer { bytes in
            // Four pseudo-headers at least, so `storage` and `ranges` are never empty and both base addresses exist.
            // nghttp2_nv's pointers are mutable in C, but nghttp2 only reads (and copies) the fields.
            let base = UnsafeMutablePointer(mutating: bytes.baseAddress!)
            return withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: ranges.count) { pairs in
                for (index, range) in ranges.enumerated() {
                    pairs.initializeElement(
                        at: index,
                        to: nghttp2_nv(
                            name: base + range.name.lowerBound,
                            value: base + range.value.lowerBound,
                            namelen: range.name.count,
                            valuelen: range.value.count,
                            flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
                        )
                    )
                }
                return body(pairs.baseAddress!, ranges.count)
            }
        }
    }
}

// MARK: - C callbacks (capture nothing; the connection arrives as the session's user data)

/// Calls `body` with the connection a session's user data names, without retaining it. Safe because the connection
/// owns its session and nghttp2 calls back only from inside the connection's own calls into the session (reading,
/// sending, submitting), while the connection is alive and held by whoever called it. Retaining and releasing it
/// around each callback (half a dozen header fields per response) was about 2 % of the process's CPU in
/// `relay-bench transport`.
private func withConnection<Result>(
    _ context: UnsafeMutableRawPointer?, otherwise: Result, _ body: (NGHTTP2Connection) -> Result
) -> Result {
    guard let context else { return otherwise }
    return Unmanaged<NGHTTP2Connection>.fromOpaque(context)._withUnsafeGuaranteedRef(body)
}

private let onHeader: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, context in
    guard let frame, let name, let value else { return 0 }
    withConnection(context, otherwise: ()) { connection in
        connection.headerReceived(
            streamID: frame.pointee.hd.stream_id,
            name: UnsafeBufferPointer(start: name, count: nameLength),
            value: UnsafeBufferPointer(start: value, count: valueLength)
        )
    }
    return 0
}

private let onDataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, streamID, data, length, context in
    guard let data else { return 0 }
    withConnection(context, otherwise: ()) { connection in
        connection.dataReceived(streamID: streamID, bytes: UnsafeBufferPointer(start: data, count: length))
    }
    return 0
}

private let onFrame: nghttp2_on_frame_recv_callback = { _, frame, context in
    guard let frame else { return 0 }
    withConnection(context, otherwise: ()) { $0.frameReceived(frame) }
    return 0
}

private let onFrameNotSent: nghttp2_on_frame_not_send_callback = { _, frame, _, context in
    guard let frame else { return 0 }
    withConnection(context, otherwise: ()) { $0.frameNotSent(frame) }
    return 0
}

private let onStreamClose: nghttp2_on_stream_close_callback = { _, streamID, errorCode, context in
    withConnection(context, otherwise: ()) { $0.streamClosed(streamID: streamID, errorCode: errorCode) }
    return 0
}

private let onReadBody: nghttp2_data_source_read_callback = { _, streamID, buffer, length, flags, _, context in
    guard let buffer, let flags else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
    return withConnection(context, otherwise: Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)) { connection in
        connection.readBody(streamID: streamID, into: buffer, capacity: length, flags: flags)
    }
}
