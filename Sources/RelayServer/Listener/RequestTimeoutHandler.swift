import HTTPTypes
import Metrics
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2

/// Cuts off a client that sends a request too slowly: on an HTTP/1.1 connection, the first request's headers must
/// arrive within ``ConnectionLimits/headerTimeout`` of the handler's start (the connection's, or the TLS handshake's
/// end), and every later request's headers within the header timeout of that request's first byte; on HTTP/1.1 and
/// on each HTTP/2 stream, a request's body must end within ``ConnectionLimits/bodyTimeout`` of its headers, or keep
/// arriving at ``ConnectionLimits/bodyMinimumBytesPerSecond``: at the body timeout a body still arriving is given
/// another body timeout when it arrived at least that fast over the period just ended, and so on. Then the connection
/// (HTTP/1.1) or the stream (HTTP/2, with RST_STREAM) is closed.
///
/// Between requests a keep-alive connection is left to Hummingbird's idle timeout, which counts from the last
/// response and is not reset by bytes short of a whole request part; the first byte of the next request is seen by a
/// ``RequestBytesObserver`` this handler places before the HTTP/1.1 decoder, and starts the header timeout. (Bytes of
/// the next request that arrive in the same read as the end of the previous one are not told apart from it: such a
/// request's headers stay bounded by the idle timeout.)
///
/// Hand-written because neither NIO nor Hummingbird bounds the *total* time of a request's parts: NIO's
/// `IdleStateHandler` is reset by every byte, which a client trickling a byte every 2 s defeats, and Hummingbird's
/// idle timeout only runs between requests.
///
/// It also answers RFC 9112 §9.6 for responses sent before the request's body has arrived whole (a 401 or 413 after
/// the headers, a `Content-Length` over the limit refused before reading): on HTTP/1.1 the response says
/// `Connection: close` and the connection closes once it is written, so the rest of the body is never waited for. On
/// HTTP/2 the stream is reset with RST_STREAM NO_ERROR (RFC 9113 §8.1) ``earlyAnswerResetDelay`` after the response's
/// last frame (END_STREAM) has been written, unless its body ends, or the client resets it, before then. The reset is
/// written below ``HTTP2FramePayloadToHTTPServerCodec``, timed from that write's promise, so it follows the response
/// on the wire. (Closing the stream channel at once instead raced the response's own frames: swift-nio-http2 drops a
/// closed stream's pending writes and resets with CANCEL.) The delay spares clients the resets they do not need: a
/// client whose body was already on its way, or that resets the stream itself, gets none; resets a client receives
/// count against its own rapid-reset guard (swift-nio-http2, and so AsyncHTTPClient, allow 200 per 30 s by default),
/// and a NIO client that left many streams open tripped it on this relay's resets when they came at once.
final class RequestTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    enum Mode {
        /// An HTTP/1.1 connection: the handler starts with a header timeout, and a refusal closes the connection.
        case http1Connection
        /// One HTTP/2 stream, whose headers have arrived with it.
        case http2Stream
    }

    private enum Phase {
        /// Waiting for the first request's headers (HTTP/1.1), under the header timeout.
        case awaitingFirstHead
        case readingBody
        /// The request has arrived whole; its response is on its way, or the connection waits for the next request
        /// under Hummingbird's idle timeout.
        case requestRead
        /// The next request's first bytes have arrived (HTTP/1.1); its headers are under the header timeout.
        case awaitingNextHead
    }

    /// How long after an early answer on HTTP/2 its stream is reset, if its body has not ended.
    static let earlyAnswerResetDelay = TimeAmount.seconds(1)

    /// Clients cut off by a timeout, by what they were sending: `header` or `body`.
    static let timeoutsCounterLabel = "relay_http_client_timeouts_total"

    /// What happens when ``deadline`` passes. The raw value is the `phase` label of ``timeoutsCounterLabel``.
    private enum Cut: String {
        /// The request's headers are late: close.
        case header
        /// The request's body is late: close, unless it kept ``ConnectionLimits/bodyMinimumBytesPerSecond``.
        case body
        /// The stream's early answer has been written and its body has not ended: reset the stream (HTTP/2).
        case earlyAnswerReset
    }

    private let limits: ConnectionLimits
    private let mode: Mode
    private var phase = Phase.awaitingFirstHead
    /// When the current phase runs out, and what then happens; `nil` while no timeout runs.
    private var deadline: (at: NIODeadline, cut: Cut)?
    /// The one timer, and when it fires. It is armed lazily: at the end of a read (``channelReadComplete(context:)``)
    /// when a deadline is set and no timer fires by it, so a request that arrives whole in one read schedules and
    /// cancels nothing. A timer that fires before the deadline, or after the deadline was cleared, re-arms or
    /// ends. (Scheduling a NIO task allocates, and cancelling one searches the loop's whole timer heap: per request
    /// and per HTTP/2 stream that was measurable in `relay-bench relay`'s single-message phase.)
    private var timer: (task: Scheduled<Void>, at: NIODeadline)?
    /// Body bytes received since the body timeout was last (re)armed.
    private var bodyBytes = 0
    /// The response started before the request's body ended (HTTP/1.1): close once it is written.
    private var closeAfterResponse = false

    init(limits: ConnectionLimits, mode: Mode) {
        self.limits = limits
        self.mode = mode
    }

    /// This handler's context, while it is in a pipeline: ``RequestBytesObserver`` reports to it.
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        guard self.mode == .http1Connection else { return }
        // Between the TLS handler (if any) and the decoder, where the next request's bytes arrive undecoded. Absent
        // from a pipeline without NIO's HTTP/1.1 decoder (tests that feed request parts).
        let pipeline = context.pipeline.syncOperations
        if let decoder = try? pipeline.context(handlerType: ByteToMessageHandler<HTTPRequestDecoder>.self) {
            try? pipeline.addHandler(RequestBytesObserver(self), position: .before(decoder.handler))
        }
        if context.channel.isActive { self.startHeaderTimer(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if self.mode == .http1Connection { self.startHeaderTimer(context) }
        context.fireChannelActive()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.armTimer(context)
        context.fireChannelReadComplete()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.cancelTimer()
        self.context = nil
    }

    /// Bytes arrived before the HTTP/1.1 decoder: once a request has been read, the first of them start the next
    /// request's header timeout.
    fileprivate func requestBytesArrived() {
        guard self.phase == .requestRead, let context = self.context else { return }
        self.phase = .awaitingNextHead
        self.setDeadline(context, in: self.limits.headerTimeout, .header)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data) {
        case .head:
            self.phase = .readingBody
            self.closeAfterResponse = false
            self.bodyBytes = 0
            self.setDeadline(context, in: self.limits.bodyTimeout, .body)
        case .body(let bytes):
            self.bodyBytes += bytes.readableBytes
        case .end:
            self.deadline = nil
            self.phase = .requestRead
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch self.unwrapOutboundIn(data) {
        case .head(var response)
        where self.mode == .http1Connection && self.phase == .readingBody && response.status.kind != .informational:
            self.closeAfterResponse = true
            response.headerFields[.connection] = "close"
            context.write(self.wrapOutboundOut(.head(response)), promise: promise)
            return
        case .end where self.mode == .http2Stream && self.phase == .readingBody:
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.cascade(to: promise)
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            written.futureResult.whenSuccess {
                let (handler, context) = bound.value
                handler.earlyAnswerWritten(context)
            }
            context.write(data, promise: written)
            return
        case .end where self.closeAfterResponse:
            self.deadline = nil
            let closing = context.eventLoop.makePromise(of: Void.self)
            closing.futureResult.cascade(to: promise)
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            closing.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
            context.writeAndFlush(data, promise: closing)
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }

    /// The stream's response has been written whole while its body is still arriving (HTTP/2): unless the body ends
    /// first, reset the stream ``earlyAnswerResetDelay`` from now. (The reset replaces the body timeout.)
    private func earlyAnswerWritten(_ context: ChannelHandlerContext) {
        guard self.phase == .readingBody, context.channel.isActive else { return }
        self.setDeadline(context, in: Self.earlyAnswerResetDelay, .earlyAnswerReset)
        self.armTimer(context)
    }

    /// Resets the stream with NO_ERROR, which tells the client to stop sending without failing the response it has
    /// (RFC 9113 §8.1).
    private func resetAfterEarlyAnswer(_ context: ChannelHandlerContext) {
        guard self.phase == .readingBody, context.channel.isActive else { return }
        self.phase = .requestRead
        let pipeline = context.pipeline.syncOperations
        guard let codec = try? pipeline.context(handlerType: HTTP2FramePayloadToHTTPServerCodec.self) else {
            context.close(promise: nil)
            return
        }
        codec.writeAndFlush(NIOAny(HTTP2Frame.FramePayload.rstStream(.noError)), promise: nil)
    }

    private func startHeaderTimer(_ context: ChannelHandlerContext) {
        guard self.phase == .awaitingFirstHead, self.deadline == nil else { return }
        self.setDeadline(context, in: self.limits.headerTimeout, .header)
        self.armTimer(context)
    }

    private func setDeadline(_ context: ChannelHandlerContext, in delay: TimeAmount, _ cut: Cut) {
        self.deadline = (context.eventLoop.now + delay, cut)
    }

    /// Makes sure a timer fires by the deadline, if one is set.
    private func armTimer(_ context: ChannelHandlerContext) {
        guard let deadline = self.deadline else { return }
        if let timer = self.timer {
            guard timer.at > deadline.at else { return }
            timer.task.cancel()
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let task = context.eventLoop.scheduleTask(deadline: deadline.at) {
            let (handler, context) = bound.value
            handler.timer = nil
            handler.timerFired(context)
        }
        self.timer = (task, deadline.at)
    }

    private func timerFired(_ context: ChannelHandlerContext) {
        guard let deadline = self.deadline else { return }
        guard context.eventLoop.now >= deadline.at else {
            self.armTimer(context)
            return
        }
        self.deadline = nil
        switch deadline.cut {
        case .earlyAnswerReset:
            self.resetAfterEarlyAnswer(context)
        case .body where self.phase == .readingBody && self.bodyKeptItsRate:
            self.bodyBytes = 0
            self.setDeadline(context, in: self.limits.bodyTimeout, .body)
            self.armTimer(context)
        case .header, .body:
            Counter(label: Self.timeoutsCounterLabel, dimensions: [("phase", deadline.cut.rawValue)]).increment()
            context.close(promise: nil)
        }
    }

    /// Whether the body arrived at ``ConnectionLimits/bodyMinimumBytesPerSecond`` or faster over the body timeout
    /// just ended (never when the rate is 0).
    private var bodyKeptItsRate: Bool {
        let rate = self.limits.bodyMinimumBytesPerSecond
        guard rate > 0 else { return false }
        let seconds = Double(self.limits.bodyTimeout.nanoseconds) / 1_000_000_000
        return Double(self.bodyBytes) >= Double(rate) * seconds
    }

    private func cancelTimer() {
        self.deadline = nil
        self.timer?.task.cancel()
        self.timer = nil
    }
}

/// Tells a ``RequestTimeoutHandler`` of every read of an HTTP/1.1 connection before it is decoded, so that the first
/// byte of a request after the first starts its header timeout. It holds its handler strongly: both live in the same
/// pipeline and leave it when the connection closes.
final class RequestBytesObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let handler: RequestTimeoutHandler

    init(_ handler: RequestTimeoutHandler) {
        self.handler = handler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.handler.requestBytesArrived()
        context.fireChannelRead(data)
    }
}
