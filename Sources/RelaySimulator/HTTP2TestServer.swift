internal import Foundation
internal import NIOCore
internal import NIOHTTP2
internal import NIOPosix
internal import NIOSSL

/// A loopback HTTP/2-over-TLS server whose answers a test scripts, standing in for APNs, FCM and Expo.
///
/// ## Overview
///
/// The server speaks only what production upstreams speak to libcurl: TLS with ALPN `h2`, then HTTP/2 (never h2c,
/// which libcurl 7.88.1 mishandles on reused connections). At start it creates (or reloads) a P-256 test CA, issues
/// a leaf certificate for `127.0.0.1`, `::1` and `localhost`, and writes the CA to ``caFilePath`` for the client's
/// `CURLOPT_CAINFO`. Every request goes to one async handler, which returns an ``HTTP2TestAction``: a response
/// (optionally delayed), `RST_STREAM`, `GOAWAY`, a dropped or a stalled connection. The configuration scripts the
/// connection itself (stream limit, flow-control window, ALPN, early answers followed by `RST_STREAM(NO_ERROR)`),
/// and methods act on every open connection (``goAwayAllConnections()``, ``setMaxConcurrentStreams(_:)``,
/// ``stallAllConnections()``). ``statistics`` counts connections, streams and the client's `RST_STREAM` and `PING`
/// frames, so tests can assert how a client used its connections, not only what it got back.
///
/// ```swift
/// let server = try await HTTP2TestServer.start { request in
///     request.header("apns-topic") == nil
///         ? .respond(.json(400, #"{"reason":"MissingTopic"}"#))
///         : .respond(HTTP2TestResponse(status: 200, headers: [(name: "apns-id", value: "EABC")]))
/// }
/// // Send to server.baseURL with CURLOPT_CAINFO = server.caFilePath, assert, then:
/// try await server.shutdown()
/// ```
///
/// ### Implementation
///
/// - **Event loops.** The server owns a `MultiThreadedEventLoopGroup` with one thread per core. Each accepted
///   channel gets `NIOSSLServerHandler` and a `NIOHTTP2Handler` with its inline multiplexer; each request stream
///   channel gets an ``HTTP2TestStreamHandler`` that assembles the request on the event loop.
/// - **Frames.** Between TLS and HTTP/2, an ``HTTP2TestWireHandler`` reads every frame header both ways: the frame
///   counters come from there, because swift-nio-http2 passes no frame up for a `RST_STREAM` on a closed stream.
///   Stalling a connection cuts it off at the same place.
/// - **Handlers.** A complete request is yielded to one `AsyncStream`. A single server task consumes it and runs the
///   handler for each request as a child task of a discarding task group, so thousands of slow handlers run at once
///   and ``shutdown()`` can wait for all of them. The handler's action is then performed with one hop back to the
///   stream's event loop; a delay is a scheduled event-loop task, not a sleeping task or thread.
/// - **Connections.** Each connection's `GOAWAY` bookkeeping is a pure ``ConnectionStateMachine`` confined to its
///   event loop; other threads reach it through `EventLoop.execute`. A quiescing connection closes itself once its
///   last stream ends.
/// - **Shared state.** Statistics and the set of open connections live behind one `Mutex` in ``SharedState``.
/// - **Restarts.** The listening socket sets `SO_REUSEADDR`, and a certificate directory that holds `ca.pem` and
///   `ca-key.pem` keeps its CA, so `start(configuration: old.configuration)` brings a server back on the same port,
///   trusted by the same CA file.
package final class HTTP2TestServer: Sendable {
    /// The bound port.
    package let port: Int
    /// The PEM file of the CA that signed the server's certificate.
    package let caFilePath: String
    /// The CA; pass it to ``start(configuration:identity:handler:)`` to start another server clients already trust.
    package let identity: HTTP2TestIdentity
    /// The configuration as resolved at start: the bound ``port`` and the certificate directory actually used.
    /// Starting a new server with it (after ``shutdown()``) reuses both.
    package let configuration: Configuration

    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let shared: SharedState
    private let requests: AsyncStream<HTTP2TestStream>.Continuation
    private let handlerLoop: Task<Void, Never>

    private init(
        configuration: Configuration,
        identity: HTTP2TestIdentity,
        caFilePath: String,
        group: MultiThreadedEventLoopGroup,
        serverChannel: any Channel,
        shared: SharedState,
        requests: AsyncStream<HTTP2TestStream>.Continuation,
        handlerLoop: Task<Void, Never>
    ) {
        self.port = configuration.port
        self.caFilePath = caFilePath
        self.identity = identity
        self.configuration = configuration
        self.group = group
        self.serverChannel = serverChannel
        self.shared = shared
        self.requests = requests
        self.handlerLoop = handlerLoop
    }

    /// `https://<host>:<port>`, with `127.0.0.1` for a wildcard host and brackets around IPv6 literals.
    package var baseURL: String {
        let host: String
        switch self.configuration.host {
        case "0.0.0.0", "": host = "127.0.0.1"
        case "::": host = "[::1]"
        case let literal where literal.contains(":"): host = "[\(literal)]"
        case let name: host = name
        }
        return "https://\(host):\(self.port)"
    }

    /// A snapshot of the counters.
    package var statistics: HTTP2TestServerStatistics {
        self.shared.statistics
    }

    /// Starts a server with the CA found in `configuration.certificateDirectory`, or a new one.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen and how to behave.
    ///   - handler: Decides what to do with each request; called concurrently, from tasks, never on an event loop.
    /// - Throws: When the certificates cannot be made or written, or the port cannot be bound.
    package static func start(
        configuration: Configuration = .init(),
        handler: @escaping @Sendable (HTTP2TestRequest) async -> HTTP2TestAction
    ) async throws -> HTTP2TestServer {
        try await Self.start(configuration: configuration, identity: nil, handler: handler)
    }

    /// Starts a server whose certificate is issued by `identity`, writing the CA to the certificate directory.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen and how to behave.
    ///   - identity: The CA to use; `nil` loads it from `configuration.certificateDirectory` or makes a new one.
    ///   - handler: Decides what to do with each request; called concurrently, from tasks, never on an event loop.
    /// - Throws: When the certificates cannot be made or written, or the port cannot be bound.
    package static func start(
        configuration: Configuration,
        identity: HTTP2TestIdentity?,
        handler: @escaping @Sendable (HTTP2TestRequest) async -> HTTP2TestAction
    ) async throws -> HTTP2TestServer {
        guard configuration.maxConcurrentStreams >= 0, (configuration.goAwayEveryStreams ?? 1) >= 1,
            (1...Int(Int32.max)).contains(configuration.initialWindowSize)
        else {
            throw HTTP2TestServerError.invalidConfiguration
        }
        var configuration = configuration
        let directory = try configuration.certificateDirectory ?? Self.makeTemporaryDirectory()
        configuration.certificateDirectory = directory
        let identity = try identity ?? HTTP2TestIdentity.load(from: directory) ?? HTTP2TestIdentity.generate()
        let caFilePath = try identity.write(to: directory)
        let sslContext = try Self.makeSSLContext(
            identity: identity,
            host: configuration.host,
            alpnProtocols: configuration.alpnProtocols
        )

        let shared = SharedState(maxConcurrentStreams: configuration.maxConcurrentStreams)
        let (requestStream, requests) = AsyncStream.makeStream(of: HTTP2TestStream.self)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
        let serverChannel: any Channel
        do {
            let channelConfiguration = configuration
            serverChannel = try await ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: listenBacklog)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.configureConnection(
                            channel,
                            sslContext: sslContext,
                            configuration: channelConfiguration,
                            shared: shared,
                            dispatch: { requests.yield($0) }
                        )
                    }
                }
                .bind(host: configuration.host, port: configuration.port)
                .get()
        } catch {
            requests.finish()
            try? await group.shutdownGracefully()
            throw error
        }
        configuration.port = serverChannel.localAddress?.port ?? configuration.port

        // The one task the server owns; shutdown() finishes its stream and awaits it.
        let handlerLoop = Task {
            await withDiscardingTaskGroup { group in
                for await stream in requestStream {
                    group.addTask {
                        let action = await handler(stream.request)
                        stream.perform(action, shared: shared)
                    }
                }
            }
        }
        return HTTP2TestServer(
            configuration: configuration,
            identity: identity,
            caFilePath: caFilePath,
            group: group,
            serverChannel: serverChannel,
            shared: shared,
            requests: requests,
            handlerLoop: handlerLoop
        )
    }

    /// Sends `GOAWAY(NO_ERROR)` on every open connection, with the highest stream it accepted as the last stream ID;
    /// each connection closes once its open streams end.
    ///
    /// Returns at once; the frames go out on the event loops right after. Wait for
    /// ``HTTP2TestServerStatistics/goAwaysSent`` with ``waitForStatistics(until:)`` to know they were sent.
    package func goAwayAllConnections() {
        for record in self.shared.connections {
            record.channel.eventLoop.execute { record.connection.value.goAway(lastStreamID: nil) }
        }
    }

    /// Closes every open connection at once: no `GOAWAY`, no TLS `close_notify`; the peer sees a TCP reset.
    ///
    /// Returns at once; wait for ``HTTP2TestServerStatistics/connectionsOpen`` to reach 0 to know they are closed.
    package func dropAllConnections() {
        for record in self.shared.connections {
            record.channel.eventLoop.execute { record.connection.value.drop() }
        }
    }

    /// Sends `SETTINGS` with `SETTINGS_MAX_CONCURRENT_STREAMS = value` on every open connection, and advertises
    /// `value` on every connection accepted from now on.
    ///
    /// Lowering the limit below the streams a client has open is allowed (RFC 9113 §6.5.2): its open streams finish
    /// normally, and only a new stream opened beyond the new limit after the client acknowledged the `SETTINGS` is a
    /// connection error (`PROTOCOL_ERROR`), as with the initial limit. Stalled connections get nothing.
    ///
    /// Returns at once; wait for ``HTTP2TestServerStatistics/settingsChangesSent`` to know the frames were written.
    ///
    /// - Parameter value: The new limit, from 0 to 2^32 − 1.
    package func setMaxConcurrentStreams(_ value: Int) {
        precondition((0...Int(UInt32.max)).contains(value), "SETTINGS_MAX_CONCURRENT_STREAMS is a 32-bit value")
        // Stored before visiting the registered connections; see configureConnection for the other half.
        self.shared.maxConcurrentStreams = value
        for record in self.shared.connections {
            record.channel.eventLoop.execute { record.connection.value.sendSettings(maxConcurrentStreams: value) }
        }
    }

    /// Starts ``HTTP2TestServerStatistics/maxConcurrentStreamsSeen`` and
    /// ``HTTP2TestServerStatistics/maxConcurrentStreamsTotal`` again, so a test can measure a phase on its own: for
    /// example how many streams a client opens after ``setMaxConcurrentStreams(_:)`` lowered the limit. A stream opened
    /// afterwards counts with every stream already open on its connection; call it while no stream is open (wait for
    /// ``HTTP2TestServerStatistics/streamsInFlight`` to reach 0) for an exact measure of what follows.
    package func resetMaxConcurrentStreamsSeen() {
        self.shared.resetStreamPeaks()
    }

    /// Stalls every open connection, as ``HTTP2TestAction/stallConnection`` stalls one: it stops reading its socket
    /// and never sends another byte (no response, no `PING` ACK, no `WINDOW_UPDATE`, no `GOAWAY`), while its TCP
    /// connection stays open, so a client can only find out with a timeout (a `PING` that is never acknowledged).
    /// Running handlers finish, but their answers are discarded. ``dropAllConnections()`` and ``shutdown()`` still
    /// close stalled connections. Connections accepted later are not stalled.
    ///
    /// Returns at once; wait for ``HTTP2TestServerStatistics/connectionsStalled`` to know they are stalled.
    package func stallAllConnections() {
        for record in self.shared.connections {
            record.channel.eventLoop.execute { record.connection.value.stall() }
        }
    }

    /// Suspends until `predicate` holds for the statistics, then returns them: the way for a test to wait for the
    /// server side of an event (a connection closing, a `GOAWAY` sent) without sleeping.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled first (for example by a time limit).
    @discardableResult
    package func waitForStatistics(
        until predicate: @escaping @Sendable (HTTP2TestServerStatistics) -> Bool
    ) async throws -> HTTP2TestServerStatistics {
        try await self.shared.waitForStatistics(until: predicate)
    }

    /// Stops listening, closes every connection (TCP close without TLS `close_notify`), waits for running handlers
    /// (cancelling them) and stops the event loops. Calling it again does nothing.
    package func shutdown() async throws {
        guard let connections = self.shared.beginShutdown() else {
            return
        }
        try? await self.serverChannel.close()
        for record in connections {
            record.channel.eventLoop.execute { record.connection.value.closeImmediately() }
        }
        for record in connections {
            try? await record.channel.closeFuture.get()
        }
        self.requests.finish()
        self.handlerLoop.cancel()
        await self.handlerLoop.value
        try await self.group.shutdownGracefully()
    }

    private static func makeSSLContext(
        identity: HTTP2TestIdentity,
        host: String,
        alpnProtocols: [String]
    ) throws -> NIOSSLContext {
        let leaf = try identity.issueServerCertificate(host: host)
        let certificate = try NIOSSLCertificate(bytes: Array(leaf.certificatePEM.utf8), format: .pem)
        let privateKey = try NIOSSLPrivateKey(bytes: Array(leaf.privateKeyPEM.utf8), format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate)],
            privateKey: .privateKey(privateKey)
        )
        tls.minimumTLSVersion = .tlsv12  // APNs requires TLS 1.2 or later; PushRelay sets CURL_SSLVERSION_TLSv1_2.
        tls.applicationProtocols = alpnProtocols
        // A graceful close waits this long for the client's close_notify; clients that simply hang up (libcurl
        // after a GOAWAY) would otherwise keep the connection counted as open for the default 5 seconds.
        tls.shutdownTimeout = .seconds(1)
        return try NIOSSLContext(configuration: tls)
    }

    private static func makeTemporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("relay-simulator-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }
}

/// Room for a burst of connections (a pool opening all of its connections at once).
private let listenBacklog: Int32 = 1024

/// Why ``HTTP2TestServer/start(configuration:identity:handler:)`` refused to start.
package enum HTTP2TestServerError: Error, Hashable {
    /// A negative `maxConcurrentStreams`, a `goAwayEveryStreams` below 1, or an `initialWindowSize` outside
    /// 1...2^31 − 1.
    case invalidConfiguration
}
