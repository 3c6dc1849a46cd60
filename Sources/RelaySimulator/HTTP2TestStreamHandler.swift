internal import NIOCore
internal import NIOHPACK
internal import NIOHTTP2

/// Collects one request stream's HEADERS and DATA frames into an ``HTTP2TestRequest`` and hands it to the server's
/// handler tasks once the client ends the stream.
///
/// Counts the stream as open from the moment it is added (the stream's first HEADERS frame) until its channel goes
/// inactive, so the statistics already include a stream when the handler sees its request.
///
/// With ``HTTP2TestServer/Configuration/answerBeforeBody`` the request is handed over as soon as its HEADERS arrive,
/// with an empty body; the DATA frames that follow are read (so flow control keeps the client's window open) and
/// dropped, and ``requestEnded`` tells the response writer whether the client has ended the stream. With
/// ``HTTP2TestServer/Configuration/keepStreamAfterEarlyAnswer`` the stream stops reading once the request is handed
/// over: the DATA frames that follow stay buffered, so no WINDOW_UPDATE tops the client's stream window up.
final class HTTP2TestStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private enum State {
        /// Waiting for the request HEADERS.
        case idle
        /// HEADERS arrived; collecting DATA into `body` until END_STREAM.
        case receivingBody(HTTP2TestRequest)
        /// The request went to the handler.
        case dispatched
    }

    private let connection: HTTP2TestConnection
    private let streamID: Int
    private let answerBeforeBody: Bool
    private let keepStreamAfterEarlyAnswer: Bool
    private let dispatch: @Sendable (HTTP2TestStream) -> Void
    private var state: State = .idle
    /// Whether the client's `END_STREAM` arrived (on HEADERS, DATA or trailers).
    private(set) var requestEnded = false
    /// The request body so far; kept outside `State` so appending never copies it.
    private var body: [UInt8] = []
    private var isCounted = false

    init(
        connection: HTTP2TestConnection,
        streamID: Int,
        answerBeforeBody: Bool = false,
        keepStreamAfterEarlyAnswer: Bool = false,
        dispatch: @escaping @Sendable (HTTP2TestStream) -> Void
    ) {
        self.connection = connection
        self.streamID = streamID
        self.answerBeforeBody = answerBeforeBody
        self.keepStreamAfterEarlyAnswer = keepStreamAfterEarlyAnswer
        self.dispatch = dispatch
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.isCounted = true
        self.connection.streamOpened(streamID: self.streamID)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.uncount()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.uncount()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let payload = self.unwrapInboundIn(data)
        switch payload {
        case .headers(let frame) where frame.endStream: self.requestEnded = true
        case .data(let frame) where frame.endStream: self.requestEnded = true
        default: break
        }
        switch (payload, self.state) {
        case (.headers(let headers), .idle):
            let request = Self.makeRequest(
                headers.headers,
                connectionID: self.connection.id,
                streamID: self.streamID
            )
            self.state = .receivingBody(request)
            if headers.endStream || self.answerBeforeBody {
                self.finish(context: context)
            }
        case (.data(let data), .receivingBody):
            if case .byteBuffer(let bytes) = data.data {
                self.body.append(contentsOf: bytes.readableBytesView)
            }
            if data.endStream {
                self.finish(context: context)
            }
        case (.headers(let trailers), .receivingBody) where trailers.endStream:
            self.finish(context: context)
        default:
            // Trailers without END_STREAM, WINDOW_UPDATE, PRIORITY and frames after dispatch carry nothing the
            // handler needs.
            break
        }
    }

    private func finish(context: ChannelHandlerContext) {
        guard case .receivingBody(var request) = self.state else {
            return
        }
        self.state = .dispatched
        request.body = self.body
        self.body = []
        let keepsStream = self.answerBeforeBody && self.keepStreamAfterEarlyAnswer
        if keepsStream {
            // Reads delivered to this handler are what returns window to the client: none are asked for again.
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        }
        self.dispatch(
            HTTP2TestStream(
                request: request,
                channel: context.channel,
                connection: NIOLoopBound(self.connection, eventLoop: context.eventLoop),
                earlyAnswer: self.answerBeforeBody && !keepsStream
                    ? NIOLoopBound(self, eventLoop: context.eventLoop) : nil
            )
        )
    }

    private func uncount() {
        guard self.isCounted else {
            return
        }
        self.isCounted = false
        self.connection.streamClosed()
    }

    /// Splits the pseudo-headers out of a request header block (swift-nio-http2 has already validated it).
    static func makeRequest(_ headers: HPACKHeaders, connectionID: Int, streamID: Int) -> HTTP2TestRequest {
        var request = HTTP2TestRequest(method: "", path: "", connectionID: connectionID, streamID: streamID)
        request.headers.reserveCapacity(headers.count)
        for (name, value, _) in headers {
            switch name {
            case ":method": request.method = value
            case ":path": request.path = value
            case ":authority": request.authority = value
            case _ where name.hasPrefix(":"): continue
            default: request.headers.append((name: name.lowercased(), value: value))
            }
        }
        return request
    }
}
