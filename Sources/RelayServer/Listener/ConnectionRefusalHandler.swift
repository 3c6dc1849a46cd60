import HTTPTypes
import NIOCore

/// The whole pipeline of a connection accepted beyond `[server] max_connections` (``AdmittingChannel``): it is
/// refused as soon as it is active, without reading a request.
///
/// - Plain HTTP/1.1 (``Answer/httpServiceUnavailable``): a fixed 503 `TOO_MANY_CONNECTIONS` with `Connection: close`
///   and `Retry-After`, then the relay's side is shut (FIN) and the connection closes when the client closes its own,
///   or after ``lingerTimeout``. Closing at once would make the kernel answer a request still arriving with a reset,
///   which can destroy the 503 in the client's receive buffer before it is read (RFC 9112 §9.6); anything the client
///   sends meanwhile is read and dropped.
/// - TLS (``Answer/close``): closed at once, before any handshake. Answering with a 503 would first cost the TLS
///   handshake (the key exchange and signature) that the cap exists to bound, for every connection of a flood; a TLS
///   client sees a connection closed during its handshake, and retries as it would after any failed connect.
final class ConnectionRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    enum Answer: Sendable {
        /// Close before reading anything.
        case close
        /// Write this response, then close.
        case httpResponse(ByteBuffer)

        /// The plain listener's refusal: 503 `TOO_MANY_CONNECTIONS` in the relay's JSON error shape.
        static let httpServiceUnavailable = Answer.httpResponse(Self.rendered(.tooManyConnections))

        /// `error` as a whole HTTP/1.1 response that closes its connection.
        static func rendered(_ error: RelayHTTPError) -> ByteBuffer {
            let body = error.body
            var head = "HTTP/1.1 \(error.status.code) \(error.status.reasonPhrase)\r\n"
            for field in error.headers { head += "\(field.name.rawName): \(field.value)\r\n" }
            head += "Content-Type: application/json; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
            head += "Connection: close\r\n\r\n"
            var buffer = ByteBuffer(string: head)
            buffer.writeBytes(body)
            return buffer
        }
    }

    /// How long a refused plain connection, its answer written, waits for the client to close before it is closed.
    static let lingerTimeout = TimeAmount.seconds(1)

    private let answer: Answer
    private var refused = false
    private var linger: Scheduled<Void>?

    init(answer: Answer) {
        self.answer = answer
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { self.refuse(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.refuse(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.linger?.cancel()
        self.linger = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Dropped: the request is never read.
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func refuse(_ context: ChannelHandlerContext) {
        guard !self.refused else { return }
        self.refused = true
        switch self.answer {
        case .close:
            context.close(promise: nil)
        case .httpResponse(let response):
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            self.linger = context.eventLoop.scheduleTask(in: Self.lingerTimeout) { bound.value.close(promise: nil) }
            context.writeAndFlush(self.wrapOutboundOut(response)).flatMap {
                bound.value.close(mode: .output)
            }.whenFailure { _ in
                bound.value.close(promise: nil)
            }
        }
    }
}
