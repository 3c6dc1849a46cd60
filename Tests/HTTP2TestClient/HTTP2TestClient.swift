package import NIOCore
import NIOHPACK
package import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// A small HTTP/2-over-TLS client built from NIO's own client side, so the tests check ``HTTP2TestServer`` against an
/// independent implementation rather than against itself.
///
/// One instance is one connection. Requests are NIO stream channels; root-stream frames (SETTINGS, GOAWAY, PING) and
/// the TLS handshake are observed by ``ConnectionObserver``. A pass-through handler between TLS and HTTP/2 lets a test
/// write raw frames that NIO's own state machine would refuse (``writeRawFrame(type:flags:streamID:payload:)``).
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
        /// The proxy answered `CONNECT` with this status instead of 200.
        case proxyRefused(status: Int)
    }

    /// A `CONNECT` proxy to reach the server through.
    package struct Proxy: Sendable {
        package var host: String
        package var port: Int
        /// The whole `Proxy-Authorization` value, for example `Basic cmVsYXk6c2VjcmV0`; `nil` sends none.
        package var authorization: String?

        package init(host: String = "127.0.0.1", port: Int, authorization: String? = nil) {
            self.host = host
            self.port = port
            self.authorization = authorization
        }
    }

    package let channel: any Channel
    /// The `h2` protocol negotiated by ALPN, once the TLS handshake succeeded; fails with the handshake error.
    package let negotiatedProtocol: EventLoopFuture<String?>
    /// The server's first SETTINGS frame.
    package let remoteSettings: EventLoopFuture<HTTP2Settings>
    /// The first GOAWAY the server sent.
    package let goAway: EventLoopFuture<GoAway>
    /// Every SETTINGS frame the server sent (not the acknowledgements), in order, the first one included; finishes
    /// when the connection closes. One reader at a time.
    package let settingsFrames: AsyncStream<HTTP2Settings>
    private let multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>
    private let observer: NIOLoopBound<ConnectionObserver>
    private let authority: String

    private init(
        channel: any Channel,
        multiplexer: NIOHTTP2Handler.AsyncStreamMultiplexer<Void>,
        observer: ConnectionObserver,
        authority: String
    ) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.negotiatedProtocol = observer.futures.negotiatedProtocol
        self.remoteSettings = observer.futures.remoteSettings
        self.goAway = observer.futures.goAway
        self.settingsFrames = observer.futures.settingsFrames
        self.observer = NIOLoopBound(observer, eventLoop: channel.eventLoop)
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
        try await Self.connect(
            port: port,
            trusting: caFilePath,
            host: host,
            serverHostname: serverHostname,
            applicationProtocols: applicationProtocols,
            through: nil
        )
    }

    /// Connects, through a `CONNECT` proxy when `proxy` is set, and completes the TLS handshake.
    ///
    /// - Parameters:
    ///   - port: The server's port on `host`.
    ///   - caFilePath: The only trust root.
    ///   - host: The server's address (the proxy's `CONNECT` target when there is a proxy).
    ///   - serverHostname: The name to send by SNI and to verify; `nil` verifies the server's IP address instead.
    ///   - applicationProtocols: What to offer by ALPN; the connection speaks HTTP/2 whatever is negotiated.
    ///   - proxy: The proxy to tunnel through; `nil` connects directly.
    /// - Throws: ``ClientError/proxyRefused(status:)`` when the proxy does not answer 200; connection and TLS errors.
    package static func connect(
        port: Int,
        trusting caFilePath: String,
        host: String = "127.0.0.1",
        serverHostname: String? = nil,
        applicationProtocols: [String] = ["h2"],
        through proxy: Proxy?
    ) async throws -> HTTP2TestClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caFilePath)
        tls.applicationProtocols = applicationProtocols
        let sslContext = try NIOSSLContext(configuration: tls)
        let authority = "\(serverHostname ?? host):\(port)"
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        let client: HTTP2TestClient
        if let proxy {
            let target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            let channel = try await bootstrap.connect(host: proxy.host, port: proxy.port).get()
            do {
                let status = try await Self.openTunnel(on: channel, to: target, authorization: proxy.authorization)
                guard status == 200 else {
                    throw ClientError.proxyRefused(status: status)
                }
                client = try await channel.eventLoop.submit {
                    try Self.configure(
                        channel,
                        sslContext: sslContext,
                        serverHostname: serverHostname,
                        authority: authority
                    )
                }.get()
            } catch {
                try? await channel.close()
                throw error
            }
        } else {
            client = try await bootstrap.connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.configure(
                        channel,
                        sslContext: sslContext,
                        serverHostname: serverHostname,
                        authority: authority
                    )
                }
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

    /// Adds TLS, the raw-frame writer, HTTP/2 and the observer to a connected channel; runs on its event loop.
    private static func configure(
        _ channel: any Channel,
        sslContext: NIOSSLContext,
        serverHostname: String?,
        authority: String
    ) throws -> HTTP2TestClient {
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
        try sync.addHandler(RawFrameWriter(), name: RawFrameWriter.name)
        let multiplexer = try sync.configureAsyncHTTP2Pipeline(mode: .client) { stream in
            stream.eventLoop.makeSucceededVoidFuture()  // The server never pushes.
        }
        let observer = ConnectionObserver(eventLoop: channel.eventLoop)
        try sync.addHandler(observer)
        return HTTP2TestClient(channel: channel, multiplexer: multiplexer, observer: observer, authority: authority)
    }

    /// Sends `CONNECT target` on a fresh proxy connection and reads the status of the answer; the handler that reads
    /// it removes itself, so the channel is a plain tunnel afterwards.
    private static func openTunnel(on channel: any Channel, to target: String, authorization: String?) async throws
        -> Int
    {
        let authorizationLine = authorization.map { "Proxy-Authorization: \($0)\r\n" } ?? ""
        let head = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\(authorizationLine)\r\n"
        let status = try await channel.eventLoop.submit {
            let reader = ProxyResponseReader(eventLoop: channel.eventLoop)
            try channel.pipeline.syncOperations.addHandler(reader)
            channel.writeAndFlush(ByteBuffer(string: head), promise: nil)
            return reader.status
        }.get()
        return try await status.get()
    }

    /// Sends `PING` and waits for its acknowledgement.
    ///
    /// - Parameter timeout: How long to wait for the ACK.
    /// - Returns: Whether the ACK arrived within `timeout`; `false` also when the connection closed first.
    package func ping(timeout: Duration) async throws -> Bool {
        let observer = self.observer
        let channel = self.channel
        let acknowledged = try await channel.eventLoop.submit {
            let (data, acknowledged) = observer.value.expectPingAck(timeout: TimeAmount(timeout))
            channel.writeAndFlush(HTTP2Frame(streamID: .rootStream, payload: .ping(data, ack: false)), promise: nil)
            return acknowledged
        }.get()
        return try await acknowledged.get()
    }

    /// Writes one frame as raw bytes below NIO's HTTP/2 state machine, which never learns of it: for frames a
    /// well-behaved NIO client cannot send, such as `RST_STREAM` on a stream that already ended both ways (as
    /// libcurl 7.88.1 does) or an unsolicited `PING` ACK. Must not carry header blocks (HPACK state is not updated).
    ///
    /// - Parameters:
    ///   - type: The frame type, for example 0x3 for `RST_STREAM`.
    ///   - flags: The frame flags.
    ///   - streamID: The stream, 0 for the connection.
    ///   - payload: The frame payload.
    package func writeRawFrame(type: UInt8, flags: UInt8 = 0, streamID: Int, payload: [UInt8]) async throws {
        var frame = ByteBuffer()
        frame.writeInteger(UInt8(truncatingIfNeeded: payload.count >> 16))
        frame.writeInteger(UInt16(truncatingIfNeeded: payload.count))
        frame.writeInteger(type)
        frame.writeInteger(flags)
        frame.writeInteger(UInt32(truncatingIfNeeded: streamID) & 0x7fff_ffff)
        frame.writeBytes(payload)
        let bytes = frame
        let channel = self.channel
        try await channel.eventLoop.submit {
            let context = try channel.pipeline.syncOperations.context(name: RawFrameWriter.name)
            return context.writeAndFlush(NIOAny(bytes))
        }.get().get()
    }

    /// Writes `RST_STREAM(code)` for `streamID` as a raw frame (see ``writeRawFrame(type:flags:streamID:payload:)``),
    /// so it goes out whatever state NIO thinks the stream is in.
    package func writeRawReset(streamID: Int, code: HTTP2ErrorCode) async throws {
        let value = UInt32(code.networkCode)
        try await self.writeRawFrame(
            type: 0x3,
            streamID: streamID,
            payload: [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
        )
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

    /// Sends a request's HEADERS and `body` without ending the stream, reads the whole response, then waits for the
    /// server to reset the stream: what a client sees from a server that answers before reading the body (RFC 9113
    /// §8.1).
    ///
    /// - Returns: The response, and the code of the `RST_STREAM` that followed it, or `nil` when the stream ended
    ///   otherwise (the connection closed).
    /// - Throws: `NIOHTTP2Errors.StreamClosed` when the server resets the stream before the response is complete,
    ///   ``ClientError/incompleteResponse`` when the connection ends first.
    package func requestLeavingStreamOpen(
        method: String = "POST",
        path: String = "/",
        headers: [(String, String)] = [],
        body: [UInt8] = []
    ) async throws -> (response: Response, reset: HTTP2ErrorCode?) {
        let stream = try await self.openStream()
        let requestHeaders = self.requestHeaders(method: method, path: path, headers)
        return try await stream.executeThenClose { inbound, outbound in
            var frames: [HTTP2Frame.FramePayload] = [.headers(.init(headers: requestHeaders, endStream: false))]
            if !body.isEmpty {
                frames.append(.data(.init(data: .byteBuffer(ByteBuffer(bytes: body)), endStream: false)))
            }
            try await outbound.write(contentsOf: frames)
            var status: Int?
            var responseHeaders: [(name: String, value: String)] = []
            var responseBody: [UInt8] = []
            var response: Response?
            var iterator = inbound.makeAsyncIterator()
            do {
                while let payload = try await iterator.next() {
                    switch payload {
                    case .headers(let frame) where response == nil:
                        for (name, value, _) in frame.headers {
                            if name == ":status" {
                                status = Int(value)
                            } else {
                                responseHeaders.append((name: name, value: value))
                            }
                        }
                        if frame.endStream, let status {
                            response = Response(status: status, headers: responseHeaders, body: responseBody)
                        }
                    case .data(let frame) where response == nil:
                        if case .byteBuffer(let bytes) = frame.data {
                            responseBody.append(contentsOf: bytes.readableBytesView)
                        }
                        if frame.endStream, let status {
                            response = Response(status: status, headers: responseHeaders, body: responseBody)
                        }
                    case .rstStream(let code):
                        guard let response else {
                            continue  // NIOHTTP2Errors.StreamClosed follows.
                        }
                        return (response, code)
                    default:
                        continue
                    }
                }
            } catch let error as NIOHTTP2Errors.StreamClosed {
                guard let response else {
                    throw error
                }
                return (response, error.errorCode)
            }
            guard let response else {
                throw ClientError.incompleteResponse
            }
            return (response, nil)
        }
    }

    /// Opens a stream with a request's HEADERS and at once resets it (RST_STREAM CANCEL), as a client that gives up
    /// does.
    package func openAndReset(method: String = "GET", path: String = "/") async throws {
        let stream = try await self.openStream()
        let requestHeaders = self.requestHeaders(method: method, path: path)
        try await stream.executeThenClose { _, outbound in
            try await outbound.write(contentsOf: [
                .headers(.init(headers: requestHeaders, endStream: false)), .rstStream(.cancel),
            ])
        }
    }

    private func openStream() async throws -> NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload> {
        try await self.multiplexer.openStream { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<HTTP2Frame.FramePayload, HTTP2Frame.FramePayload>(
                    wrappingChannelSynchronously: channel)
            }
        }
    }

    private func requestHeaders(method: String, path: String, _ extra: [(String, String)] = []) -> HPACKHeaders {
        HPACKHeaders(
            [(":method", method), (":scheme", "https"), (":authority", self.authority), (":path", path)] + extra)
    }

    package func close() async {
        try? await self.channel.close()
    }
}

/// Passes everything through; it only gives ``HTTP2TestClient/writeRawFrame(type:flags:streamID:payload:)`` a place
/// between TLS and HTTP/2 to write from.
private final class RawFrameWriter: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    static let name = "http2-test-client-raw-frames"
}

/// Reads a proxy's answer to `CONNECT` up to the end of its head, reports the status and removes itself. Nothing can
/// follow the head before the client speaks: the server's TLS starts only after the client's ClientHello.
private final class ProxyResponseReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    let status: EventLoopFuture<Int>
    private var promise: EventLoopPromise<Int>?
    private var buffered = ByteBuffer()

    init(eventLoop: any EventLoop) {
        let promise = eventLoop.makePromise(of: Int.self)
        self.promise = promise
        self.status = promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        self.buffered.writeBuffer(&bytes)
        let view = self.buffered.readableBytesView
        guard let end = view.firstRange(of: Array("\r\n\r\n".utf8)) else {
            return
        }
        let head = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
        self.buffered.moveReaderIndex(to: end.upperBound)
        // "HTTP/1.1 200 Connection Established": the status is the second word.
        let status = head.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
        self.promise?.succeed(status)
        self.promise = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.promise?.fail(HTTP2TestClient.ClientError.connectionClosed)
        self.promise = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.promise?.fail(HTTP2TestClient.ClientError.connectionClosed)
        self.promise = nil
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
        var settingsFrames: AsyncStream<HTTP2Settings>
    }

    let futures: Futures
    private let eventLoop: any EventLoop
    private var handshake: EventLoopPromise<String?>?
    private var settings: EventLoopPromise<HTTP2Settings>?
    private var goAway: EventLoopPromise<HTTP2TestClient.GoAway>?
    private let settingsFrames: AsyncStream<HTTP2Settings>.Continuation
    /// PINGs sent and not yet acknowledged, by their opaque data; each resolves to whether its ACK came in time.
    private var pings: [UInt64: EventLoopPromise<Bool>] = [:]
    private var nextPing: UInt64 = 1

    init(eventLoop: any EventLoop) {
        let handshake = eventLoop.makePromise(of: String?.self)
        let settings = eventLoop.makePromise(of: HTTP2Settings.self)
        let goAway = eventLoop.makePromise(of: HTTP2TestClient.GoAway.self)
        let (settingsFrames, settingsContinuation) = AsyncStream.makeStream(of: HTTP2Settings.self)
        self.eventLoop = eventLoop
        self.handshake = handshake
        self.settings = settings
        self.goAway = goAway
        self.settingsFrames = settingsContinuation
        self.futures = Futures(
            negotiatedProtocol: handshake.futureResult,
            remoteSettings: settings.futureResult,
            goAway: goAway.futureResult,
            settingsFrames: settingsFrames
        )
    }

    /// Registers a PING about to be sent: its opaque data, and a future that says whether its ACK arrives within
    /// `timeout`.
    func expectPingAck(timeout: TimeAmount) -> (HTTP2PingData, EventLoopFuture<Bool>) {
        let id = self.nextPing
        self.nextPing += 1
        let promise = self.eventLoop.makePromise(of: Bool.self)
        self.pings[id] = promise
        let loopBoundSelf = NIOLoopBound(self, eventLoop: self.eventLoop)
        self.eventLoop.scheduleTask(in: timeout) {
            loopBoundSelf.value.pings.removeValue(forKey: id)?.succeed(false)
        }
        return (HTTP2PingData(withInteger: id), promise.futureResult)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch self.unwrapInboundIn(data).payload {
        case .settings(.settings(let settings)):
            self.settings?.succeed(settings)
            self.settings = nil
            self.settingsFrames.yield(settings)
        case .ping(let data, ack: true):
            self.pings.removeValue(forKey: data.integer)?.succeed(true)
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
        self.settingsFrames.finish()
        let pings = self.pings
        self.pings = [:]
        for promise in pings.values {
            promise.succeed(false)
        }
        self.handshake?.fail(HTTP2TestClient.ClientError.connectionClosed)
        self.settings?.fail(HTTP2TestClient.ClientError.connectionClosed)
        self.goAway?.fail(HTTP2TestClient.ClientError.connectionClosed)
        self.handshake = nil
        self.settings = nil
        self.goAway = nil
    }
}
