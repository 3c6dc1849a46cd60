internal import NIOCore
internal import NIOPosix
internal import Synchronization

/// A loopback TCP forwarder to one target (a PostgreSQL server, say) that can be cut: a database outage a benchmark
/// switches on and off without privileges, by pointing its relay at the forwarder instead of the server.
///
/// ## Overview
///
/// While the forwarder is up, each accepted connection gets a connection of its own to the target and bytes go both
/// ways, unchanged, until either side closes. ``cut()`` closes every connection at once and, until ``restore()``,
/// accepts new connections and holds them without forwarding a byte (a black hole: the client's handshake is never
/// answered, as behind a lost route); ``restore()`` closes the held connections, so their clients fail and connect
/// again, and forwards new ones again.
///
/// ```swift
/// let forwarder = try await TCPFaultForwarder.start(targetHost: "127.0.0.1", targetPort: 5432)
/// // Point the client at 127.0.0.1:forwarder.port, then:
/// forwarder.cut()
/// try await Task.sleep(for: .seconds(10))
/// forwarder.restore()
/// try await forwarder.shutdown()
/// ```
///
/// ### Implementation
/// One event loop of its own. Accepted connections do not read until their target connection, opened on the same
/// event loop, is up; then a ``ProxyGlueHandler`` pair (the CONNECT proxy's) relays with backpressure. The switch
/// and the open connections live under one `Mutex`; channels are closed outside it.
package final class TCPFaultForwarder: Sendable {
    /// Counters of a running forwarder; ``TCPFaultForwarder/statistics`` returns a snapshot.
    package struct Statistics: Sendable, Equatable {
        /// Connections forwarded to the target.
        package var forwarded = 0
        /// Connections closed by ``TCPFaultForwarder/cut()``.
        package var cut = 0
        /// Connections accepted while cut, held and never forwarded.
        package var held = 0
        /// Connections whose target could not be reached.
        package var failed = 0
    }

    /// The bound port on 127.0.0.1.
    package let port: Int

    private let group: MultiThreadedEventLoopGroup
    private let serverChannel: any Channel
    private let shared: ForwarderShared

    private init(port: Int, group: MultiThreadedEventLoopGroup, serverChannel: any Channel, shared: ForwarderShared) {
        self.port = port
        self.group = group
        self.serverChannel = serverChannel
        self.shared = shared
    }

    /// Starts a forwarder on 127.0.0.1 (a free port) to `targetHost:targetPort`.
    ///
    /// - Throws: When no port can be bound.
    package static func start(targetHost: String, targetPort: Int) async throws -> TCPFaultForwarder {
        let shared = ForwarderShared()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let serverChannel: any Channel
        do {
            serverChannel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                // Nothing is read from a client before its target connection is up (nor ever, while cut).
                .childChannelOption(.autoRead, value: false)
                .childChannelInitializer { client in
                    client.eventLoop.makeCompletedFuture {
                        guard shared.admit(client) else { return }
                        Self.connect(client, to: targetHost, port: targetPort, shared: shared)
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        return TCPFaultForwarder(
            port: serverChannel.localAddress?.port ?? 0, group: group, serverChannel: serverChannel, shared: shared)
    }

    /// Opens `client`'s connection to the target on its event loop, then relays both ways.
    private static func connect(_ client: any Channel, to host: String, port: Int, shared: ForwarderShared) {
        ClientBootstrap(group: client.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .connect(host: host, port: port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let target):
                    // Cut (or left) while the target was being connected: neither side gets a byte.
                    guard client.isActive, shared.forward(client, target) else {
                        target.close(promise: nil)
                        client.close(promise: nil)
                        return
                    }
                    guard ProxyGlueHandler.join(client, target) else { return }
                    client.setOption(.autoRead, value: true).whenFailure { _ in client.close(promise: nil) }
                case .failure:
                    shared.counters.withLock { $0.failed += 1 }
                    client.close(promise: nil)
                }
            }
    }

    /// A snapshot of the counters.
    package var statistics: Statistics {
        self.shared.counters.withLock { $0 }
    }

    /// Closes every forwarded connection and holds new ones, unforwarded, until ``restore()``.
    package func cut() {
        for channel in self.shared.cut() { channel.close(promise: nil) }
    }

    /// Closes the connections held while cut, and forwards new ones again.
    package func restore() {
        for channel in self.shared.restore() { channel.close(promise: nil) }
    }

    /// Stops listening and closes every connection (shutting the event loop down closes every channel on it).
    package func shutdown() async throws {
        try? await self.serverChannel.close()
        try await self.group.shutdownGracefully()
    }
}

/// The forwarder's switch, its open connections and its counters, shared by the forwarder and its event loop.
final class ForwarderShared: Sendable {
    private struct State {
        var isCut = false
        /// Forwarded connections, both sides, by channel.
        var open: [ObjectIdentifier: any Channel] = [:]
        /// Connections accepted while cut.
        var held: [ObjectIdentifier: any Channel] = [:]
    }

    private let state = Mutex(State())
    let counters = Mutex(TCPFaultForwarder.Statistics())

    /// Records a new client connection; `false` when the forwarder is cut and the connection is held instead.
    func admit(_ client: any Channel) -> Bool {
        let admitted = state.withLock { state in
            guard state.isCut else { return true }
            state.held[ObjectIdentifier(client)] = client
            return false
        }
        if !admitted { counters.withLock { $0.held += 1 } }
        client.closeFuture.whenComplete { _ in self.forget(client) }
        return admitted
    }

    /// Records a forwarded pair; `false` when the forwarder was cut meanwhile (the caller closes both).
    func forward(_ client: any Channel, _ target: any Channel) -> Bool {
        let forwarded = state.withLock { state in
            guard !state.isCut else { return false }
            state.open[ObjectIdentifier(client)] = client
            state.open[ObjectIdentifier(target)] = target
            return true
        }
        guard forwarded else { return false }
        counters.withLock { $0.forwarded += 1 }
        target.closeFuture.whenComplete { _ in self.forget(target) }
        return true
    }

    /// Switches to cut and returns the forwarded connections to close.
    func cut() -> [any Channel] {
        let open = state.withLock { state in
            state.isCut = true
            defer { state.open = [:] }
            return Array(state.open.values)
        }
        // Both sides of a pair are in `open`: a pair is one connection.
        counters.withLock { $0.cut += open.count / 2 }
        return open
    }

    /// Switches back and returns the held connections to close.
    func restore() -> [any Channel] {
        state.withLock { state in
            state.isCut = false
            defer { state.held = [:] }
            return Array(state.held.values)
        }
    }

    private func forget(_ channel: any Channel) {
        state.withLock { state in
            state.open[ObjectIdentifier(channel)] = nil
            state.held[ObjectIdentifier(channel)] = nil
        }
    }
}
