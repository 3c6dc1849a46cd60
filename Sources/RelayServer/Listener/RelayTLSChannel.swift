package import HummingbirdCore
package import Logging
package import NIOCore
import NIOHTTP2
import NIOHTTPTypesHTTP2
import NIOSSL
import NIOTLS
import RelayApplication

/// How the relay's TLS listener treats HTTP/2 connections.
package struct RelayHTTP2Settings: Sendable, Equatable {
    /// Streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS).
    package var maxConcurrentStreams: Int
    /// On shutdown, how long a connection has to finish its streams after the first GOAWAY.
    package var gracefulCloseTimeout: TimeAmount
    /// RST_STREAM frames a client may send per `resetWindow` before the connection is closed with ENHANCE_YOUR_CALM:
    /// the "rapid reset" protection (CVE-2023-44487). swift-nio-http2's default, 200 per 30 s, is far below what an
    /// honest libcurl 7.88 client sends: it resets about 45 % of its streams after their responses (counted on the
    /// wire under relay-bench: 2,000 resets in 4,400 requests on one connection), so a busy install lost its
    /// connection, and every push in flight on it, every few seconds. 4,096 a second still stops a flood, and covers
    /// such a client at about 9,000 requests/s on one connection, above what the relay serves on this class of
    /// machine. swift-nio-http2 reserves 8 bytes per allowed reset for each connection (32 KB here), which is why
    /// the window is short rather than the count large.
    package var maxResetsPerWindow: Int
    package var resetWindow: TimeAmount
    /// Suspicious events (stream errors) over a connection's whole life before it is closed; swift-nio-http2's
    /// default of 200 would end a busy connection after hours for nothing more than late frames on reset streams.
    /// (The rate of stream errors keeps swift-nio-http2's own limit, 200 per 30 s.)
    package var maxGlitchesPerConnection: Int
    /// Streams remembered as reset, so that frames the client sent before it saw the reset are ignored rather than
    /// counted as errors (swift-nio-http2's default is 32; a connection has up to `maxConcurrentStreams` in flight).
    package var recentlyResetStreams: Int

    package init(
        maxConcurrentStreams: Int = 100,
        gracefulCloseTimeout: TimeAmount = .seconds(30),
        maxResetsPerWindow: Int = 4_096,
        resetWindow: TimeAmount = .seconds(1),
        maxGlitchesPerConnection: Int = 20_000,
        recentlyResetStreams: Int = 256
    ) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.gracefulCloseTimeout = gracefulCloseTimeout
        self.maxResetsPerWindow = maxResetsPerWindow
        self.resetWindow = resetWindow
        self.maxGlitchesPerConnection = maxGlitchesPerConnection
        self.recentlyResetStreams = recentlyResetStreams
    }

    /// The timeouts each connection's `HTTP2ConnectionLifecycle` runs on: a connection without open streams for
    /// `idle` (``ConnectionLimits/idleTimeout``) gets a GOAWAY and is closed.
    func connectionTimeouts(idle: TimeAmount) -> HTTP2ConnectionLifecycle.Timeouts {
        .init(idle: idle, gracefulClose: self.gracefulCloseTimeout)
    }

    /// The configuration of each connection's `NIOHTTP2Handler`.
    var handlerConfiguration: NIOHTTP2Handler.Configuration {
        var configuration = NIOHTTP2Handler.Configuration()
        configuration.connection.initialSettings.removeAll { $0.parameter == .maxConcurrentStreams }
        configuration.connection.initialSettings.append(
            HTTP2Setting(parameter: .maxConcurrentStreams, value: self.maxConcurrentStreams))
        configuration.stream.streamResetFrameRateLimit.maximumCount = self.maxResetsPerWindow
        configuration.stream.streamResetFrameRateLimit.windowLength = self.resetWindow
        configuration.connection.maximumConnectionGlitches = self.maxGlitchesPerConnection
        configuration.connection.maximumRecentlyResetStreams = self.recentlyResetStreams
        return configuration
    }
}

/// The relay's TLS listener channel: TLS, then ALPN picks HTTP/2 (`h2`) or HTTP/1.1. HTTP/1.1 is Hummingbird's own
/// channel; HTTP/2 is set up here rather than by HummingbirdHTTP2, whose `NIOHTTP2Handler` cannot be configured (see
/// `RelayHTTP2Settings.maxResetsPerWindow`). Each HTTP/2 stream is served by the same responder as an HTTP/1.1
/// request; `HTTP2ConnectionManager` closes idle connections and drains them on graceful shutdown, and
/// `HTTP2HeaderBlockTimeoutHandler` closes a connection whose header block does not end within the header timeout.
package struct RelayTLSChannel: HTTPChannelHandler {
    typealias HTTP2Connection = NIOHTTP2Handler.AsyncStreamMultiplexer<HTTP1Channel.Value>

    package struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Connection>>
        package let channel: any Channel
    }

    package let responder: Responder
    /// Read per connection, so that a reloaded certificate serves the connections after it.
    private let certificates: TLSCertificates
    private let http1: HTTP1Channel
    private let settings: RelayHTTP2Settings
    private let limits: ConnectionLimits

    package init(
        responder: @escaping Responder,
        certificates: TLSCertificates,
        settings: RelayHTTP2Settings,
        limits: ConnectionLimits = ConnectionLimits()
    ) {
        self.certificates = certificates
        self.responder = responder
        self.settings = settings
        self.limits = limits
        self.http1 = HTTP1Channel(responder: responder, configuration: Self.http1Configuration(limits))
    }

    /// Hummingbird's HTTP/1.1 channel with the relay's timeouts: its own idle timeout for keep-alive connections, and
    /// ``RequestTimeoutHandler`` for the first request's headers and every request's body.
    package static func http1Configuration(_ limits: ConnectionLimits) -> HTTP1Channel.Configuration {
        HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestTimeoutHandler(limits: limits, mode: .http1Connection)],
            idleTimeout: limits.idleTimeout
        )
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let sync = channel.pipeline.syncOperations
            // The TLS handshake and protocol negotiation get the header timeout: a client that opens a connection
            // and then sends nothing, or trickles its handshake, holds it no longer than one trickling its headers.
            // (After negotiation, `RequestTimeoutHandler` or the HTTP/2 connection's idle timeout take over.)
            let handshake = channel.eventLoop.scheduleTask(in: self.limits.headerTimeout) {
                channel.close(promise: nil)
            }
            try sync.addHandler(NIOSSLServerHandler(context: self.certificates.current))
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<
                NIONegotiatedHTTPVersion<HTTP1Channel.Value, HTTP2Connection>
            > { result, channel in
                switch result {
                case .negotiated("h2"):
                    return self.setupHTTP2(channel: channel, logger: logger).map { .http2($0) }
                case .negotiated("http/1.1"), .fallback:
                    return self.http1.setup(channel: channel, logger: logger).map { .http1_1($0) }
                case .negotiated:
                    return channel.close().flatMapThrowing { throw NIOHTTP2Errors.invalidALPNToken() }
                }
            }
            try sync.addHandler(negotiation)
            negotiation.protocolNegotiationResult.whenComplete { _ in handshake.cancel() }
            return Value(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    package func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let http1):
                await self.http1.handle(value: http1, logger: logger)
            case .http2(let connection):
                try await withThrowingDiscardingTaskGroup { group in
                    for try await stream in connection.inbound {
                        group.addTask {
                            await self.handleHTTP(asyncChannel: stream, logger: logger)
                        }
                    }
                }
            }
        } catch {
            logger.debug("Inbound connection ended", metadata: ["error": "\(error)"])
        }
    }

    private func setupHTTP2(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP2Connection> {
        channel.eventLoop.makeCompletedFuture {
            let manager = HTTP2ConnectionManager(
                timeouts: self.settings.connectionTimeouts(idle: self.limits.idleTimeout), eventLoop: channel.eventLoop)
            // Before NIOHTTP2Handler, which configureAsyncHTTP2Pipeline adds last.
            try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler())
            try channel.pipeline.syncOperations.addHandler(
                HTTP2HeaderBlockTimeoutHandler(timeout: self.limits.headerTimeout))
            let connection = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(
                mode: .server,
                streamDelegate: manager.streamDelegate,
                configuration: self.settings.handlerConfiguration
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandlers(
                        HTTP2FramePayloadToHTTPServerCodec(),
                        RequestTimeoutHandler(limits: self.limits, mode: .http2Stream)
                    )
                    return try HTTP1Channel.Value(wrappingChannelSynchronously: stream)
                }
            }
            try channel.pipeline.syncOperations.addHandler(manager)
            return connection
        }
    }
}
