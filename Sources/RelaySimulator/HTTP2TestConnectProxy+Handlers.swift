internal import NIOCore
internal import NIOPosix
internal import Synchronization

/// Reads a proxy connection's request head, opens the tunnel or refuses, then passes the client's bytes on to the
/// ``ProxyGlueHandler`` behind it.
///
/// Confined to the connection's event loop.
final class ConnectRequestHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        /// Collecting the request head.
        case readingHead(ByteBuffer)
        /// The target is being connected; bytes the client sends meanwhile wait here.
        case connecting(pending: ByteBuffer)
        /// Relaying: reads go to the glue handler.
        case tunnelling
        /// Refused: the error status is on its way and the connection closes after it.
        case refused
    }

    /// A request head larger than this is refused; a `CONNECT` head is one line and a few headers.
    private static let maximumHeadLength = 16 * 1024

    /// `Basic <base64>` when credentials are required.
    private let expectedAuthorization: String?
    private let shared: ProxyShared
    private var state: State = .readingHead(ByteBuffer())

    init(expectedAuthorization: String?, shared: ProxyShared) {
        self.expectedAuthorization = expectedAuthorization
        self.shared = shared
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = self.unwrapInboundIn(data)
        switch self.state {
        case .readingHead(var head):
            self.state = .refused  // Drops the state's reference, so appending does not copy the buffer.
            head.writeBuffer(&bytes)
            self.state = .readingHead(head)
            self.readHead(context: context, buffered: head)
        case .connecting(var pending):
            self.state = .refused
            pending.writeBuffer(&bytes)
            self.state = .connecting(pending: pending)
        case .tunnelling:
            context.fireChannelRead(data)
        case .refused:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if case .tunnelling = self.state {
            context.fireChannelReadComplete()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func readHead(context: ChannelHandlerContext, buffered: ByteBuffer) {
        let view = buffered.readableBytesView
        guard let end = Self.endOfHead(in: view) else {
            if buffered.readableBytes > Self.maximumHeadLength {
                self.refuse(context: context, status: "400 Bad Request")
            }
            return
        }
        let headLength = end - view.startIndex
        var rest = buffered
        let head = rest.readString(length: headLength) ?? ""
        rest.moveReaderIndex(forwardBy: 4)  // The blank line's CRLF CRLF.

        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.first?.split(separator: " ", omittingEmptySubsequences: true) ?? []
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
            self.refuse(context: context, status: "400 Bad Request")
            return
        }
        guard requestLine[0] == "CONNECT" else {
            self.refuse(context: context, status: "405 Method Not Allowed", headers: ["Allow: CONNECT"])
            return
        }
        let target = String(requestLine[1])
        self.shared.counters.withLock { $0.lastTarget = target }

        if let expected = self.expectedAuthorization {
            let authorization = lines.dropFirst().lazy.compactMap(Self.proxyAuthorization).first
            guard let authorization, Self.matches(authorization, expected: expected) else {
                self.refuse(
                    context: context,
                    status: "407 Proxy Authentication Required",
                    headers: [#"Proxy-Authenticate: Basic realm="HTTP2TestConnectProxy""#]
                )
                return
            }
        }
        guard let (host, port) = Self.splitAuthority(target) else {
            self.refuse(context: context, status: "400 Bad Request")
            return
        }
        self.state = .connecting(pending: rest)
        self.connect(context: context, host: host, port: port)
    }

    private func connect(context: ChannelHandlerContext, host: String, port: Int) {
        // The target's channel lives on this event loop too, so the two glue handlers may call each other.
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .connect(host: host, port: port)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let target):
                    self.tunnel(context: context, to: target)
                case .failure:
                    self.refuse(context: context, status: "502 Bad Gateway")
                }
            }
    }

    private func tunnel(context: ChannelHandlerContext, to target: any Channel) {
        guard case .connecting(let pending) = self.state, context.channel.isActive else {
            target.close(promise: nil)  // The client left while the target was being connected.
            return
        }
        guard ProxyGlueHandler.join(context.channel, target) else { return }
        self.state = .tunnelling
        self.shared.counters.withLock { $0.tunnelsOpened += 1 }
        context.writeAndFlush(
            self.wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")),
            promise: nil
        )
        if pending.readableBytes > 0 {
            // The client did not wait for the 200 (allowed by RFC 9110 §9.3.6 only as an optimisation).
            context.fireChannelRead(self.wrapInboundOut(pending))
            context.fireChannelReadComplete()
        }
    }

    private func refuse(context: ChannelHandlerContext, status: String, headers: [String] = []) {
        self.state = .refused
        self.shared.counters.withLock { $0.tunnelsRefused += 1 }
        let head = (["HTTP/1.1 \(status)"] + headers + ["Content-Length: 0", "Connection: close", "", ""])
            .joined(separator: "\r\n")
        context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: head)))
            .assumeIsolated()
            .whenComplete { _ in context.close(promise: nil) }
    }

    /// The index of the blank line's first CR (`\r\n\r\n`), if the head is complete.
    private static func endOfHead(in view: ByteBufferView) -> ByteBufferView.Index? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        guard view.count >= terminator.count else {
            return nil
        }
        var index = view.startIndex
        while index <= view.endIndex - terminator.count {
            if view[index] == 13, view[index + 1] == 10, view[index + 2] == 13, view[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    /// The value of a `Proxy-Authorization` header line, or `nil` for any other line.
    private static func proxyAuthorization(_ line: Substring) -> Substring? {
        guard let colon = line.firstIndex(of: ":"),
            line[..<colon].lowercased() == "proxy-authorization"
        else {
            return nil
        }
        return line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
    }

    /// The scheme is case-insensitive (RFC 9110 §11.1), the credentials are compared exactly.
    private static func matches(_ authorization: Substring, expected: String) -> Bool {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        let expectedParts = expected.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, expectedParts.count == 2 else {
            return false
        }
        var credentials = parts[1]
        while let last = credentials.last, last == " " || last == "\t" {
            credentials = credentials.dropLast()
        }
        return parts[0].lowercased() == expectedParts[0].lowercased() && credentials == expectedParts[1]
    }

    /// `host:port` or `[v6]:port` into its parts; `nil` when malformed.
    static func splitAuthority(_ authority: String) -> (host: String, port: Int)? {
        let host: Substring
        let portText: Substring
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]"),
                authority[authority.index(after: close)...].hasPrefix(":")
            else {
                return nil
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            portText = authority[authority.index(close, offsetBy: 2)...]
        } else {
            guard let colon = authority.lastIndex(of: ":") else {
                return nil
            }
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65535).contains(port) else {
            return nil
        }
        return (String(host), port)
    }
}

/// One end of a tunnel: writes what its channel reads into the partner's channel, reads only while the partner can
/// write, and closes the partner when its own channel closes.
///
/// Both ends live on the same event loop, so they call each other directly.
final class ProxyGlueHandler: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: ProxyGlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false

    private init() {}

    /// Two ends that know each other; add one to each channel.
    /// Glues two channels' pipelines, on their event loops' threads, each forwarding to the other; closes both when
    /// the handlers cannot be added. Returns whether they are joined.
    static func join(_ client: any Channel, _ target: any Channel) -> Bool {
        let (clientSide, targetSide) = matchedPair()
        do {
            try client.pipeline.syncOperations.addHandler(clientSide)
            try target.pipeline.syncOperations.addHandler(targetSide)
            return true
        } catch {
            target.close(promise: nil)
            client.close(promise: nil)
            return false
        }
    }

    static func matchedPair() -> (ProxyGlueHandler, ProxyGlueHandler) {
        let first = ProxyGlueHandler()
        let second = ProxyGlueHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        self.partner = nil  // Breaks the reference cycle.
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.partner?.partnerWrite(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.partner?.partnerFlush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.partner?.partnerClose()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            self.partner?.partnerBecameWritable()
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if self.partner?.partnerIsWritable ?? false {
            context.read()
        } else {
            self.pendingRead = true
        }
    }

    private func partnerWrite(_ data: NIOAny) {
        self.context?.write(data, promise: nil)
    }

    private func partnerFlush() {
        self.context?.flush()
    }

    private func partnerClose() {
        self.context?.close(promise: nil)
    }

    private var partnerIsWritable: Bool {
        self.context?.channel.isWritable ?? false
    }

    private func partnerBecameWritable() {
        if self.pendingRead {
            self.pendingRead = false
            self.context?.read()
        }
    }
}
