internal import NIOCore
internal import NIOHPACK
internal import NIOHTTP2

/// A request waiting for its handler, with what it takes to answer it: the stream channel and the connection.
struct HTTP2TestStream: Sendable {
    let request: HTTP2TestRequest
    /// The HTTP/2 stream channel of the request.
    let channel: any Channel
    let connection: NIOLoopBound<HTTP2TestConnection>
    /// The stream's handler when the request was dispatched before its body
    /// (``HTTP2TestServer/Configuration/answerBeforeBody``): the response is then followed by `RST_STREAM(NO_ERROR)`
    /// unless the client has ended the stream by then.
    let earlyAnswer: NIOLoopBound<HTTP2TestStreamHandler>?

    /// Performs the handler's decision on the stream's event loop; returns without waiting for the writes.
    ///
    /// Nothing is written on a stalled connection, whatever the action.
    func perform(_ action: HTTP2TestAction, shared: HTTP2TestServer.SharedState) {
        let eventLoop = self.channel.eventLoop
        switch action {
        case .respond(let response, let delay) where delay > .zero:
            eventLoop.scheduleTask(in: TimeAmount(delay)) { self.write(response, shared: shared) }
        case .respond(let response, _):
            eventLoop.execute { self.write(response, shared: shared) }
        case .resetStream(let code):
            eventLoop.execute { self.reset(code, shared: shared) }
        case .goAway(let response):
            eventLoop.execute {
                guard !self.connection.value.isStalled else {
                    return
                }
                self.connection.value.goAway(lastStreamID: self.request.streamID)
                if let response {
                    self.write(response, shared: shared)
                } else {
                    // REFUSED_STREAM tells the client the request was not processed, so it may retry it elsewhere.
                    self.reset(.refusedStream, shared: shared)
                }
            }
        case .dropConnection:
            eventLoop.execute { self.connection.value.drop() }
        case .stallConnection:
            eventLoop.execute { self.connection.value.stall() }
        }
    }

    private func write(_ response: HTTP2TestResponse, shared: HTTP2TestServer.SharedState) {
        guard !self.connection.value.isStalled else {
            return
        }
        let hasBody = !response.body.isEmpty
        let headers = HPACKHeaders(Self.responseHeaders(response))
        // The frame with END_STREAM; an early answer's RST_STREAM(NO_ERROR) waits until it is written, since
        // swift-nio-http2 would discard response DATA still held back by flow control when the stream is reset.
        let ended = self.earlyAnswer.map { _ in self.channel.eventLoop.makePromise(of: Void.self) }
        self.channel.write(
            HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: !hasBody)),
            promise: hasBody ? nil : ended
        )
        if hasBody {
            let body = self.channel.allocator.buffer(bytes: response.body)
            self.channel.write(
                HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(body), endStream: true)),
                promise: ended
            )
        }
        self.channel.flush()
        if let ended, let earlyAnswer = self.earlyAnswer {
            ended.futureResult.whenSuccess {
                // A client that ended its side meanwhile has a fully closed stream: nothing may follow (RFC 9113
                // §5.1). Otherwise the request body is no longer wanted (§8.1).
                guard !earlyAnswer.value.requestEnded else {
                    return
                }
                self.reset(.noError, shared: shared)
            }
        }
    }

    private func reset(_ code: HTTP2ErrorCode, shared: HTTP2TestServer.SharedState) {
        guard self.channel.isActive, !self.connection.value.isStalled else {
            return  // The client reset the stream or the connection went away first: nothing is sent.
        }
        shared.resetSent()
        self.channel.writeAndFlush(HTTP2Frame.FramePayload.rstStream(code), promise: nil)
    }

    /// The header block of `response`: `:status` first, then the caller's headers minus connection-specific ones
    /// and `content-length`, then `content-type` (when there is a body and none was given) and `content-length`.
    static func responseHeaders(_ response: HTTP2TestResponse) -> [(String, String)] {
        var headers: [(String, String)] = [(":status", String(response.status))]
        var hasContentType = false
        for (name, value) in response.headers {
            let name = name.lowercased()
            if connectionSpecificHeaders.contains(name) || name == "content-length" || name.hasPrefix(":") {
                continue
            }
            hasContentType = hasContentType || name == "content-type"
            headers.append((name, value))
        }
        if !response.body.isEmpty, !hasContentType {
            headers.append(("content-type", "application/octet-stream"))
        }
        headers.append(("content-length", String(response.body.count)))
        return headers
    }
}

/// Headers HTTP/2 forbids (RFC 9113 §8.2.2); libcurl 7.88.1 answers them with `PROTOCOL_ERROR` (curl #12172).
private let connectionSpecificHeaders: Set<String> = [
    "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade",
]
