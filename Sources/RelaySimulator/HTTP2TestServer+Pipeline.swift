internal import NIOCore
internal import NIOHTTP2
internal import NIOSSL

extension HTTP2TestServer {
    /// Builds an accepted connection's pipeline; runs on its event loop.
    ///
    /// `[TLS (ALPN h2)] → [HTTP2TestWireHandler] → [NIOHTTP2Handler + inline multiplexer] →
    /// [HTTP2TestConnectionHandler]`, each inbound stream channel getting an ``HTTP2TestStreamHandler``.
    static func configureConnection(
        _ channel: any Channel,
        sslContext: NIOSSLContext,
        configuration: Configuration,
        shared: SharedState,
        dispatch: @escaping @Sendable (HTTP2TestStream) -> Void
    ) throws {
        let id = shared.makeConnectionID()
        let wire = HTTP2TestWireHandler(shared: shared)
        let connection = HTTP2TestConnection(
            id: id,
            channel: channel,
            shared: shared,
            wire: wire,
            goAwayEveryStreams: configuration.goAwayEveryStreams
        )
        let boundConnection = NIOLoopBound(connection, eventLoop: channel.eventLoop)
        channel.closeFuture.whenComplete { _ in
            boundConnection.value.connectionClosed()
            shared.connectionClosed(id: id)
        }
        guard shared.register(.init(channel: channel, connection: boundConnection), id: id) else {
            channel.close(promise: nil)  // Accepted while shutting down.
            return
        }

        // Read after registering: setMaxConcurrentStreams(_:) stores the new value before it visits the registered
        // connections, so a connection gets the new value here or a SETTINGS frame with it, never neither.
        let maxConcurrentStreams = shared.maxConcurrentStreams
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(NIOSSLServerHandler(context: sslContext), name: HTTP2TestConnection.tlsHandlerName)
        try sync.addHandler(wire)
        _ = try sync.configureHTTP2Pipeline(
            mode: .server,
            connectionConfiguration: Self.connectionConfiguration(
                configuration,
                maxConcurrentStreams: maxConcurrentStreams
            ),
            streamConfiguration: Self.streamConfiguration(configuration),
            streamDelegate: configuration.goAwayEveryStreams == nil ? nil : StreamAcceptanceDelegate(boundConnection),
            inboundStreamInitializer: { stream in
                stream.eventLoop.makeCompletedFuture {
                    let streamID = try stream.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
                    try stream.pipeline.syncOperations.addHandler(
                        HTTP2TestStreamHandler(
                            connection: boundConnection.value,
                            streamID: streamID.map(Int.init) ?? 0,
                            answerBeforeBody: configuration.answerBeforeBody,
                            keepStreamAfterEarlyAnswer: configuration.keepStreamAfterEarlyAnswer,
                            dispatch: dispatch
                        )
                    )
                }
            }
        )
        try sync.addHandler(HTTP2TestConnectionHandler(connection: connection))
    }

    private static func connectionConfiguration(
        _ configuration: Configuration,
        maxConcurrentStreams: Int
    ) -> NIOHTTP2Handler.ConnectionConfiguration {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
            HTTP2Setting(parameter: .initialWindowSize, value: configuration.initialWindowSize),
        ]
        connection.targetWindowSize = connectionWindowSize
        // A test server meets clients that reset streams by the thousand (timeouts, cancellations, benchmarks);
        // swift-nio-http2's flood protections would close those connections and turn a test into a mystery.
        // The glitch limit is a plain counter; the reset-stream memory is preallocated, so it stays modest.
        connection.maximumConnectionGlitches = Int.max
        connection.maximumRecentlyResetStreams = recentlyResetStreamsKept
        return connection
    }

    private static func streamConfiguration(_ configuration: Configuration) -> NIOHTTP2Handler.StreamConfiguration {
        var stream = NIOHTTP2Handler.StreamConfiguration()
        // The window a stream's reads top up to is the one advertised, so a small advertised window stays small
        // (a larger target would open it wider with the first WINDOW_UPDATE) and a body keeps flowing.
        stream.targetWindowSize = configuration.initialWindowSize
        // These limiters preallocate one timestamp per allowed event, so allow a high rate over a short window
        // rather than a huge count. libcurl 7.88.1 resets many of its streams after their responses: at 4,096 a
        // second the relay's APNs connections (two, ~8,000 notifications a second in relay-bench's batched phase)
        // were closed with ENHANCE_YOUR_CALM 28 times in one run, and the streams caught in the closing connection
        // came back as curl error 16. 32,768 a second is above what one libcurl connection can send at all.
        stream.streamResetFrameRateLimit.maximumCount = clientResetsPerSecond
        stream.streamResetFrameRateLimit.windowLength = .seconds(1)
        stream.streamErrorRateLimit.maximumCount = clientResetsPerSecond
        stream.streamErrorRateLimit.windowLength = .seconds(1)
        return stream
    }
}

private let connectionWindowSize = 1 << 26
/// Matches libcurl's own header limit; far above any push request.
private let maxHeaderListSize = 1 << 16
/// Streams swift-nio-http2 remembers as reset, so late frames on them are ignored rather than counted as errors.
private let recentlyResetStreamsKept = 1024
private let clientResetsPerSecond = 32_768

/// Tells the connection when swift-nio-http2 accepted a stream, after the stream's HEADERS frame was fully processed,
/// so a `GOAWAY` for ``HTTP2TestServer/Configuration/goAwayEveryStreams`` goes out before the next frame is read.
private struct StreamAcceptanceDelegate: NIOHTTP2StreamDelegate {
    let connection: NIOLoopBound<HTTP2TestConnection>

    init(_ connection: NIOLoopBound<HTTP2TestConnection>) {
        self.connection = connection
    }

    func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
        self.connection.value.streamAccepted(streamID: Int(id))
    }

    func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {}
}
