internal import NIOCore
internal import NIOHTTP2

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The controller of one accepted connection: owns its ``HTTP2TestServer/ConnectionStateMachine`` and performs its
/// actions.
///
/// Confined to the connection's event loop: the pipeline's handlers hold it directly, everyone else reaches it
/// through `NIOLoopBound` and `EventLoop.execute`.
final class HTTP2TestConnection {
    /// The pipeline name of the TLS handler; closing through its context skips TLS (`close_notify`).
    static let tlsHandlerName = "relay-simulator-tls"

    let id: Int
    let channel: any Channel
    private let shared: HTTP2TestServer.SharedState
    private let wire: HTTP2TestWireHandler
    private var machine: HTTP2TestServer.ConnectionStateMachine

    init(
        id: Int,
        channel: any Channel,
        shared: HTTP2TestServer.SharedState,
        wire: HTTP2TestWireHandler,
        goAwayEveryStreams: Int?
    ) {
        self.id = id
        self.channel = channel
        self.shared = shared
        self.wire = wire
        self.machine = HTTP2TestServer.ConnectionStateMachine(goAwayEveryStreams: goAwayEveryStreams)
    }

    /// Whether the connection was stalled: it reads and writes nothing more until it is closed.
    var isStalled: Bool {
        self.wire.isStalled
    }

    /// A request stream's channel opened (its HEADERS arrived).
    func streamOpened(streamID: Int) {
        let open = self.machine.streamOpened(streamID: streamID)
        self.shared.streamOpened(openOnConnection: open)
    }

    /// A request stream's channel closed.
    func streamClosed() {
        self.shared.streamClosed()
        self.perform(self.machine.streamClosed())
    }

    /// The HTTP/2 layer accepted stream `streamID`; may trigger ``HTTP2TestServer/Configuration/goAwayEveryStreams``.
    func streamAccepted(streamID: Int) {
        self.perform(self.machine.streamAccepted(streamID: streamID))
    }

    /// Sends a graceful `GOAWAY` unless one with the same or a lower last stream ID went out already.
    ///
    /// - Parameter lastStreamID: The last stream the client may consider processed; `nil` means the highest so far.
    func goAway(lastStreamID: Int?) {
        self.perform(self.machine.goAwayRequested(lastStreamID: lastStreamID))
    }

    /// Stops reading the socket (`autoRead` off) and writing to it, for good: no response, no `PING` ACK, no
    /// `WINDOW_UPDATE`, no `GOAWAY` goes out any more; the peer sees a silent server with an open TCP connection.
    /// Closing still works (``drop()``, ``closeImmediately()``, server shutdown).
    func stall() {
        guard !self.wire.isStalled, self.channel.isActive else {
            return
        }
        self.wire.stall()
        try? self.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
        self.shared.connectionStalled()
    }

    /// Sends `SETTINGS` with a new `SETTINGS_MAX_CONCURRENT_STREAMS`, unless the connection is stalled or closed.
    ///
    /// swift-nio-http2 applies a lowered limit only when the client acknowledges the `SETTINGS` (RFC 9113 §6.5.3),
    /// and counts only streams that are open at the protocol level, so a client that had more streams open keeps
    /// them and gets no error as long as it opens new ones within the new limit once it has acknowledged.
    func sendSettings(maxConcurrentStreams: Int) {
        guard !self.wire.isStalled, self.channel.isActive else {
            return
        }
        self.shared.settingsChangeSent()
        let frame = HTTP2Frame(
            streamID: .rootStream,
            payload: .settings(.settings([HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams)]))
        )
        self.channel.writeAndFlush(frame, promise: nil)
    }

    /// Closes the TCP connection at once: no `GOAWAY`, no TLS `close_notify`, and `SO_LINGER` 0 so the peer gets
    /// a reset instead of a FIN.
    func drop() {
        self.machine.connectionClosed()
        if let socket = self.channel as? any SocketOptionProvider {
            _ = socket.setSoLinger(linger(l_onoff: 1, l_linger: 0))
        }
        self.closeBelowTLS()
    }

    /// Closes the TCP connection without TLS `close_notify` (a FIN, no reset) and without reading another byte:
    /// shutdown does not wait for clients, and a client refused by ALPN gets no request processed.
    func closeImmediately() {
        self.machine.connectionClosed()
        self.closeBelowTLS()
    }

    /// The channel became inactive.
    func connectionClosed() {
        self.machine.connectionClosed()
    }

    private func closeBelowTLS() {
        // `ChannelHandlerContext.close` starts at the handler before the TLS handler, so NIOSSL never sees it.
        if let tls = try? self.channel.pipeline.syncOperations.context(name: Self.tlsHandlerName) {
            tls.close(promise: nil)
        } else {
            self.channel.close(promise: nil)
        }
    }

    private func perform(_ action: HTTP2TestServer.ConnectionStateMachine.Action) {
        guard !self.wire.isStalled else {
            return  // A stalled connection neither says GOAWAY nor closes by itself.
        }
        switch action {
        case .none:
            break
        case .sendGoAway(let lastStreamID, let thenClose):
            self.shared.goAwaySent()
            let frame = HTTP2Frame(
                streamID: .rootStream,
                payload: .goAway(lastStreamID: HTTP2StreamID(lastStreamID), errorCode: .noError, opaqueData: nil)
            )
            let channel = self.channel
            if thenClose {
                let written = channel.eventLoop.makePromise(of: Void.self)
                written.futureResult.whenComplete { _ in channel.close(promise: nil) }
                channel.writeAndFlush(frame, promise: written)
            } else {
                channel.writeAndFlush(frame, promise: nil)
            }
        case .close:
            // Deferred by one event-loop turn: the last stream closed while its final frame was being written, and
            // that frame's flush has to reach TLS before the close does.
            let channel = self.channel
            channel.eventLoop.execute { channel.close(promise: nil) }
        }
    }
}
