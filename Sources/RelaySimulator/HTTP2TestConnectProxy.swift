internal import NIOCore
internal import NIOPosix
internal import Synchronization

/// A loopback HTTP/1.1 `CONNECT` proxy, so client tests can reach an ``HTTP2TestServer`` through a tunnel as they
/// would reach APNs through a corporate proxy.
///
/// ## Overview
///
/// The proxy listens on plain TCP, reads one request head, and for `CONNECT host:port HTTP/1.1` connects to the
/// target, answers `HTTP/1.1 200 Connection Established` and then relays bytes both ways, unchanged (the client's TLS
/// runs end to end through it), until either side closes; then it closes the other. With `requiredCredentials` a
/// request without the matching `Proxy-Authorization: Basic …` gets `407`; any other method gets `405`; a target that
/// cannot be reached gets `502`. Each refusal closes the connection.
///
/// ```swift
/// let proxy = try await HTTP2TestConnectProxy.start(requiredCredentials: (user: "relay", password: "secret"))
/// // Point the client at proxy.url with those credentials and send to server.baseURL, then:
/// #expect(proxy.statistics.lastTarget == "127.0.0.1:\(server.port)")
/// try await proxy.shutdown()
/// ```
///
/// ### Implementation
/// One event loop of its own. Each accepted connection starts with a ``ConnectRequestHandler``; once the tunnel is up
/// it passes bytes through to a ``ProxyGlueHandler`` paired with one on the target connection, which is opened on
/// the same event loop, so the two handlers call each other directly and relay with backpressure (a side reads only
/// while the other can write).
package final class HTTP2TestConnectProxy: Sendable {
    /// Counters of a running proxy; ``HTTP2TestConnectProxy/statistics`` returns a snapshot.
    package struct Statistics: Sendable, Equatable {
        /// Tunnels established: the target connected and `200` sent.
        package var tunnelsOpened = 0
        /// Requests answered with an error status (`400`, `405`, `407`, `502`) and closed.
        package var tunnelsRefused = 0
        /// The target (`host:port`) of the last `CONNECT` request, whether it was tunnelled or refused.
        package var lastTarget: String? = nil

        package init(tunnelsOpened: Int = 0, tunnelsRefused: Int = 0, lastTarget: String? = nil) {
            self.tunnelsOpened = tunnelsOpened
            self.tunnelsRefused = tunnelsRefused
            self.lastTarget = lastTarget
        }
    }

    /// The bound port.
    package let port: Int
    /// The address the proxy listens on.
    package let host: String

    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let shared: ProxyShared

    private init(
        host: String,
        port: Int,
        group: MultiThreadedEventLoopGroup,
        serverChannel: any Channel,
        shared: ProxyShared
    ) {
        self.host = host
        self.port = port
        self.group = group
        self.serverChannel = serverChannel
        self.shared = shared
    }

    /// `http://<host>:<port>`, with `127.0.0.1` for a wildcard host and brackets around IPv6 literals: what a client
    /// takes as its proxy URL.
    package var url: String {
        let host: String
        switch self.host {
        case "0.0.0.0", "": host = "127.0.0.1"
        case "::": host = "[::1]"
        case let literal where literal.contains(":"): host = "[\(literal)]"
        case let name: host = name
        }
        return "http://\(host):\(self.port)"
    }

    /// A snapshot of the counters. A tunnel is counted before its `200` is written and a refusal before its error
    /// status, so a client that has read its answer sees it counted.
    package var statistics: Statistics {
        self.shared.counters.withLock { $0 }
    }

    /// Starts a proxy.
    ///
    /// - Parameters:
    ///   - host: The address to listen on.
    ///   - port: The port; 0 picks a free one (read it back from ``port``).
    ///   - requiredCredentials: When set, every `CONNECT` must carry `Proxy-Authorization: Basic` with exactly these.
    /// - Throws: When the port cannot be bound.
    package static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        requiredCredentials: (user: String, password: String)? = nil
    ) async throws -> HTTP2TestConnectProxy {
        let shared = ProxyShared()
        let expectedAuthorization = requiredCredentials.map { "Basic " + base64("\($0.user):\($0.password)") }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let serverChannel: any Channel
        do {
            serverChannel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectRequestHandler(expectedAuthorization: expectedAuthorization, shared: shared)
                        )
                    }
                }
                .bind(host: host, port: port)
                .get()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        return HTTP2TestConnectProxy(
            host: host,
            port: serverChannel.localAddress?.port ?? port,
            group: group,
            serverChannel: serverChannel,
            shared: shared
        )
    }

    /// Stops listening and closes every connection, tunnelled or not (shutting the event loop down closes every
    /// channel on it).
    package func shutdown() async throws {
        try? await self.serverChannel.close()
        try await self.group.shutdownGracefully()
    }
}

/// The proxy's counters, shared by the proxy and its connection handlers on any thread.
final class ProxyShared: Sendable {
    let counters = Mutex(HTTP2TestConnectProxy.Statistics())
}

/// Standard base64 with padding (RFC 4648 §4), for the `Basic` credentials (RFC 7617) of `Proxy-Authorization`.
func base64(_ text: String) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    let bytes = Array(text.utf8)
    var encoded: [UInt8] = []
    encoded.reserveCapacity((bytes.count + 2) / 3 * 4)
    var index = 0
    while index < bytes.count {
        let remaining = bytes.count - index
        let b0 = UInt32(bytes[index])
        let b1 = remaining > 1 ? UInt32(bytes[index + 1]) : 0
        let b2 = remaining > 2 ? UInt32(bytes[index + 2]) : 0
        let group = b0 << 16 | b1 << 8 | b2
        encoded.append(alphabet[Int(group >> 18 & 0x3f)])
        encoded.append(alphabet[Int(group >> 12 & 0x3f)])
        encoded.append(remaining > 1 ? alphabet[Int(group >> 6 & 0x3f)] : UInt8(ascii: "="))
        encoded.append(remaining > 2 ? alphabet[Int(group & 0x3f)] : UInt8(ascii: "="))
        index += 3
    }
    return String(decoding: encoded, as: UTF8.self)
}
