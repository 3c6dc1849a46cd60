package import NIOCore
import NIOHPACK
package import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// A small HTTP/2-over-TLS client built from NIO's own client side, so the tests check ``HTTP2TestServer`` against an
/// independent implementation rather than against itself.
///
/// One instance is one connection. Requests are NIO stream channels; root-stream frames (SETTINGS, GOAWAY) and the
/// TLS handshake are observed by ``ConnectionObserver``.
package final class HTTP2TestClient: Sendable {
    package struct Response: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]

        package func header(_ name: String) -> String? {
            self.headers.first { $0.name == name }?.value
        }

        package var bodyText: String {
            String(decoding: self.body, as: UTF8.self)
        }
    }

    package struct GoAway: Sendable, Equatable {
        package var lastStreamID: Int
        package var errorCode: HTTP2ErrorCode

        package init(lastStreamID: Int, errorCode: HTTP2ErrorCode) {
            self.lastStreamID = lastStreamID
            self.errorCode = errorCode
        }
    }

    package enum ClientError: Error {
        /// The stream ended (connection closed) before a complete response arrived.
        case incompleteResponse
        /// The connection closed before the awaited event.
        case connectionClosed
    }

    package let channel: any Channel
    /// The `h2` protocol negotiated by ALPN, once the TLS handshake succeeded; fails with the handshake error.
    package let negotiatedProtocol: EventLoopFuture<String?>
    /// The server's first SETTINGS frame.
    package let remoteSettings: EventLoopFuture<HTTP2Settings>
    /// The first GOAWAY the server sent.
    package let goAway: EventLoopFuture<GoAway>
    private let multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>
    private let authority: String

    private init(
        channel: any Channel,
        multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>,
        observer: ConnectionObserver.Futures,
        authority: String
    ) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.negotiatedProtocol = observer.negotiatedProtocol
        self.remoteSettings = observer.remoteSettings
        self.goAway = observer.goAway
        self.authority = authority
    }

    /// Connects and completes the TLS handshake.
    ///
    /// - Parameters:
    ///   - port: The server's port on `host`.
    ///   - caFilePath: The only trust root.
    ///   - host: The address to connect to.
    ///   - serverHostname: The name to send by SNI and to verify; `nil` verifies the server's IP address instead.
    ///   - applicationProtocols: What to offer by ALPN; the connection speaks HTTP/2 whatever is negotiated.
    package static func connect(
        port: Int,
        trusting caFilePath: String,
        host: String = "127.0.0.1",
        serverHostname: String? = nil,
        applicationProtocols: [String] = ["h2"]
    ) async throws -> HTTP2TestClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caFilePath)
        tls.applicationProtocols = applicationProtocols
        let sslContext = try NIOSSLContext(configuration: tls)
        let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                    let multiplexer = try sync.configureAsyncHTTP2Pipeline(mode: .client) { stream in
                        stream.eventLoop.makeSucceededVoidFuture()  // The server never pushes.
                    }
                    let observer = ConnectionObserver(eventLoop: channel.eventLoop)
                    try sync.addHandler(observer)
                    return HTTP2TestClient(
                        channel: channel,
                        multiplexer: multiplexer,
                        observer: observer.futures,
                        authority: "\(serverHostname ?? host):\(port)"
                    )
                }
            }
        do {
            _ = try await client.negotiatedProtocol.get()
        } catch {
            try? await client.channel.close()
            throw error
        }
        return client
    }

    /// Sends one request on a new stream and reads the whole response.
    ///
    /// - Throws: `NIOHTTP2Errors.StreamClosed` when the server resets the stream, ``ClientError/incompleteResponse``
    ///   when the connection ends first.
    package func request(
        method: String = "POST",
        path: String = "/",
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) async throws -> Response {
        let stream = try await self.openStream()
        let requestHeaders = self.requestHeaders(method: method, path: path, headers)
        return try await stream.executeThenClose { inbound, outbound in
            if body.isEmpty {
                try await outbound.write(.headers(.init(headers: requestHeaders, endStream: true)))
            } else {
                try await outbound.write(
                    contentsOf: [
                        .headers(.init(headers: requestHeaders, endStream: false)),
                        .data(.init(data: .byteBuffer(ByteBuffer(bytes: body)), endStream: true)),
                    ]
                )
            }
            var status: Int?
            var responseHeaders: [(name: String, value: String)] = []
            var responseBody: [UInt8] = []
            for try await payload in inbound {
                switch payload {
                case .headers(let frame):
                    for (name, value, _) in frame.headers {
                        if name == ":status" {
                            status = Int(value)
                        } else {
                            responseHeaders.append((name: name, value: value))
                        }
                    }
                    if frame.endStream, let status {
                        return Response(status: status, headers: responseHeaders, body: responseBody)
                    }
                case .data(let frame):
                    if case .byteBuffer(let bytes) = frame.data {
                        responseBody.append(contentsOf: bytes.readableBytesView)
                    }
                    if frame.endStream, let status {
                        return Response(status: status, headers: responseHeaders, body: responseBody)
                    }
                default:
                    continue
                }
            }
            throw ClientError.incompleteResponse
        }
    }

    /// Opens a stream with a request's HEADERS and at once resets it (RST_STREAM CANCEL), as a client that gives up does.
    package func openAndReset(method: String = "GET", path: String = "/") async throws {
        let stream = try await self.openStream()
        let requestHeaders = self.requestHeaders(method: method, path: path)
        try await stream.executeThenClose { _, outbound in
            try await outbound.write(contentsOf: [.headers(.init(headers: requestHeaders, endStream: false)), .rstStream(.cancel)])
        }
    }

    private func openStream() async throws -> NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload> {
        try await self.multiplexer.openStream { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>(wrappingChannelSynchronously: channel)
            }
        }
    }

    private func requestHeaders(method: String, path: String, _ extra: [(String, String)] = []) -> HPACKHeaders {
        HPACKHeaders([(":method", method), (":scheme", "https"), (":authority", self.authority), (":path", path)] + extra)
    }

    package func close() async {
        try? await self.channel.close()
    }
}

/// Watches a client connection: the TLS handshake, the server's first SETTINGS and first GOAWAY.
///
/// Confined to the connection's event loop; every promise is completed exactly once (or failed when the connection
/// closes first).
private final class ConnectionObserver: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    struct Futures {
        var negotiatedProtocol: EventLoopFuture<String?>
        var remoteSettings: EventLoopFuture<HTTP2Settings>
        var goAway: EventLoopFuture<HTTP2TestClient.GoAway>
    }

    let futures: Futures
    private var handshake: EventLoopPromise<String?>?
    private var settings: EventLoopPromise<HTTP2Settings>?
    private var goAway: EventLoopPromise<HTTP2TestClient.GoAway>?

    init(eventLoop: any EventLoop) {
        let handshake = eventLoop.makePromise(of: String?.self)
        let settings = eventLoop.makePromise(of: HTTP2Settings.self)
        let goAway = eventLoop.makePromise(of: HTTP2TestClient.GoAway.self)
        self.handshake = handshake
        self.settings = settings
        self.goAway = goAway
        self.futures = Futures(
            negotiatedProtocol: handshake.futureResult,
            remoteSettings: settings.futureResult,
            goAway: goAway.futureResult
        )
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data).payload {
        case .settings(.settings(let settings)):
            self.settings?.succeed(settings)
            self.settings = nil
        case .goAway(let lastStreamID, let errorCode, _):
            self.goAway?.succeed(.init(lastStreamID: Int(lastStreamID), errorCode: errorCode))
            self.goAway = nil
        default:
            break
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted(let negotiatedProtocol) = event as? TLSUserEvent {
            self.handshake?.succeed(negotiatedProtocol)
            self.handshake = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A failed handshake arrives here before the channel closes: report that error, not a bare close.
        self.handshake?.fail(error)
        self.handshake = nil
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.failPending()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Not every closing path reaches this handler with channelInactive (a connection that fails while
        // NIOHTTP2Handler is still activating), but every one removes it.
        self.failPending()
    }

    private func failPending() {
        self.handshake?.fail(HTTP2TestClient.ClientError.connectionClosed)
        self.settings?.fail(HTTP2TestClient.ClientError.connectionClosed)
        self.goAway?.fail(HTTP2TestClient.ClientError.connectionClosed)
        self.handshake = nil
        self.settings = nil
        self.goAway = nil
    }
}
