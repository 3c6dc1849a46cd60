internal import NIOCore
internal import NIOHTTP2
internal import NIOTLS

/// The last handler of a connection: closes connections that did not negotiate `h2` and swallows the errors a
/// test server expects (peers vanishing, protocol errors swift-nio-http2 already answered).
final class HTTP2TestConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let connection: HTTP2TestConnection

    init(connection: HTTP2TestConnection) {
        self.connection = connection
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiatedProtocol) = event as? TLSUserEvent, negotiatedProtocol != "h2" {
            // HTTP/2 only: a client that did not pick h2 by ALPN would speak HTTP/1.1 next. Closing below TLS
            // (rather than a graceful TLS close, which keeps reading) guarantees none of its bytes are processed.
            self.connection.closeImmediately()
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Root-stream frames (SETTINGS, PING, GOAWAY) were already handled by NIOHTTP2Handler.
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIOHTTP2Handler answers protocol errors itself (RST_STREAM or GOAWAY); TLS and socket errors end the
        // connection anyway. Nothing to add here.
    }
}
