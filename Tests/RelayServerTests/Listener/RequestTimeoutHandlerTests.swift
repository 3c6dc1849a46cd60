import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOHTTPTypesHTTP2
import Testing

@testable import RelayServer

/// `RequestTimeoutHandler` on an `EmbeddedChannel`: the test moves the event loop's clock, so each timeout is proved
/// by advancing time, never by waiting.
@Suite struct RequestTimeoutHandlerTests {
    static let limits = ConnectionLimits(
        headerTimeout: .seconds(10), bodyTimeout: .seconds(30), idleTimeout: .seconds(60), maxConnections: 10)

    static func channel(_ mode: RequestTimeoutHandler.Mode, limits: ConnectionLimits = limits) throws -> EmbeddedChannel
    {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(RequestTimeoutHandler(limits: limits, mode: mode))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    static let head = HTTPRequestPart.head(
        HTTPRequest(method: .post, scheme: nil, authority: "relay", path: "/v1/push"))

    @Test func aConnectionWithoutHeadersIsClosedAtTheHeaderTimeout() throws {
        let channel = try Self.channel(.http1Connection)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func headersInTimeStartTheBodyTimeout() throws {
        let channel = try Self.channel(.http1Connection)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        try channel.writeInbound(Self.head)
        // A body trickled a byte at a time is cut off at the body timeout, counted from the headers.
        for _ in 0..<14 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(2))
            try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "x")))
            #expect(channel.isActive)
        }
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
    }

    @Test func aWholeRequestStopsTheTimersAndTheIdleConnectionIsLeftToHummingbird() throws {
        let channel = try Self.channel(.http1Connection)
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
        // The next request's body has its own timeout.
        try channel.writeInbound(Self.head)
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(!channel.isActive)
    }

    @Test func aResponseBeforeTheBodyEndsClosesTheConnection() throws {
        let channel = try Self.channel(.http1Connection)
        try channel.writeInbound(Self.head)
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .contentTooLarge)))
        guard case .head(let response) = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no response head")
            return
        }
        #expect(response.headerFields[.connection] == "close")
        #expect(channel.isActive)
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        #expect(!channel.isActive)
    }

    @Test func aResponseAfterTheWholeRequestKeepsTheConnection() throws {
        let channel = try Self.channel(.http1Connection)
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        guard case .head(let response) = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no response head")
            return
        }
        #expect(response.headerFields[.connection] == nil)
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        #expect(channel.isActive)
    }

    @Test func anHTTP2StreamHasNoHeaderTimeoutButABodyTimeout() throws {
        let channel = try Self.channel(.http2Stream)
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
        try channel.writeInbound(Self.head)
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    /// An HTTP/1.1 connection's pipeline as Hummingbird's `HTTP1Channel` builds it (without its idle timeout), fed
    /// raw bytes; one request has been read and answered.
    static func keepAliveConnection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
        try channel.pipeline.syncOperations.addHandlers(
            HTTP1ToHTTPServerCodec(secure: false), RequestTimeoutHandler(limits: limits, mode: .http1Connection))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try channel.writeInbound(ByteBuffer(string: "GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n"))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) != nil)
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok, headerFields: [.contentLength: "0"])))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        return channel
    }

    @Test func aLaterRequestsHeadersMustArriveWithinTheHeaderTimeoutOfItsFirstByte() throws {
        let channel = try Self.keepAliveConnection()
        // Idle between requests: left to Hummingbird's idle timeout, which this pipeline does not have.
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
        // The next request's first bytes start the header timeout; more bytes do not extend it.
        try channel.writeInbound(ByteBuffer(string: "POST /v1/push HT"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try channel.writeInbound(ByteBuffer(string: "TP/1.1\r\nHost: re"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(5) - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test func aLaterRequestsHeadersInTimeStartItsBodyTimeout() throws {
        let channel = try Self.keepAliveConnection()
        try channel.writeInbound(ByteBuffer(string: "POST /v1/push HT"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        try channel.writeInbound(ByteBuffer(string: "TP/1.1\r\nHost: relay\r\nContent-Length: 2\r\n\r\n"))
        // The body timeout (30 s, with a minimum rate nobody sending keeps), not the header timeout, now applies.
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    /// An HTTP/2 stream's pipeline as ``RelayTLSChannel`` builds it: the frames codec, then the handler.
    static func stream() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(
            HTTP2FramePayloadToHTTPServerCodec(), RequestTimeoutHandler(limits: limits, mode: .http2Stream))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        let headers: HPACKHeaders = [":method": "POST", ":scheme": "https", ":authority": "relay", ":path": "/v1/push"]
        try channel.writeInbound(HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: false)))
        _ = try channel.readInbound(as: HTTPRequestPart.self)
        return channel
    }

    /// The frames written so far: `headers` or `data` (with ` end` for END_STREAM), or `rst_stream(<error code>)`.
    static func writtenFrames(_ channel: EmbeddedChannel) throws -> [String] {
        var frames: [String] = []
        while let frame = try channel.readOutbound(as: HTTP2Frame.FramePayload.self) {
            switch frame {
            case .headers(let headers): frames.append(headers.endStream ? "headers end" : "headers")
            case .data(let data): frames.append(data.endStream ? "data end" : "data")
            case .rstStream(let code): frames.append("rst_stream(\(code.networkCode))")
            default: frames.append("other")
            }
        }
        return frames
    }

    @Test func anHTTP2StreamAnsweredBeforeItsBodyEndsIsResetOnceTheAnswerIsWritten() throws {
        let channel = try Self.stream()
        // Written but not flushed: nothing goes out, so nothing may be reset yet.
        channel.write(HTTPResponsePart.head(HTTPResponse(status: .unauthorized)), promise: nil)
        channel.write(HTTPResponsePart.body(ByteBuffer(string: "{}")), promise: nil)
        channel.write(HTTPResponsePart.end(nil), promise: nil)
        #expect(try Self.writtenFrames(channel).isEmpty)
        channel.flush()
        // The answer whole, its END_STREAM included, then, a moment later, RST_STREAM NO_ERROR (RFC 9113 §8.1).
        let answer = try Self.writtenFrames(channel)
        #expect(answer == ["headers", "data", "data end"])
        channel.embeddedEventLoop.advanceTime(by: RequestTimeoutHandler.earlyAnswerResetDelay - .milliseconds(1))
        #expect(try Self.writtenFrames(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        let reset = try Self.writtenFrames(channel)
        #expect(reset == ["rst_stream(\(HTTP2ErrorCode.noError.networkCode))"])
    }

    @Test func anHTTP2StreamWhoseBodyEndsJustAfterAnEarlyAnswerIsNotReset() throws {
        let channel = try Self.stream()
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .unauthorized)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: RequestTimeoutHandler.earlyAnswerResetDelay - .milliseconds(1))
        try channel.writeInbound(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        let frames = try Self.writtenFrames(channel)
        #expect(frames == ["headers", "data end"])
        #expect(channel.isActive)
    }

    @Test func anHTTP2StreamAnsweredAfterItsBodyEndedIsNotReset() throws {
        let channel = try Self.stream()
        try channel.writeInbound(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)))
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        let frames = try Self.writtenFrames(channel)
        #expect(frames == ["headers", "data end"])
        #expect(channel.isActive)
    }

    /// Sends `bytesPerSecond` of body a second for `seconds` seconds, a part at the start of each second; returns
    /// whether the channel is still open at the end.
    static func sendBody(_ channel: EmbeddedChannel, bytesPerSecond: Int, seconds: Int) throws -> Bool {
        for _ in 0..<seconds {
            guard channel.isActive else { return false }
            try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(repeating: 0x20, count: bytesPerSecond)))
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        }
        return channel.isActive
    }

    @Test(arguments: [RequestTimeoutHandler.Mode.http1Connection, .http2Stream])
    func aBodyArrivingAtTheMinimumRateOutlivesTheBodyTimeout(mode: RequestTimeoutHandler.Mode) throws {
        // 30 s and 1,024 bytes/s: a body sent at exactly the rate for 100 s is never cut, and ends normally.
        let channel = try Self.channel(mode)
        try channel.writeInbound(Self.head)
        #expect(try Self.sendBody(channel, bytesPerSecond: 1_024, seconds: 100))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
    }

    @Test(arguments: [RequestTimeoutHandler.Mode.http1Connection, .http2Stream])
    func aBodyBelowTheMinimumRateIsCutAtTheBodyTimeout(mode: RequestTimeoutHandler.Mode) throws {
        let channel = try Self.channel(mode)
        try channel.writeInbound(Self.head)
        #expect(try Self.sendBody(channel, bytesPerSecond: 1_000, seconds: 29))
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func aBodyThatStopsArrivingIsCutAtTheEndOfThePeriod() throws {
        let channel = try Self.channel(.http1Connection)
        try channel.writeInbound(Self.head)
        // Fast for the first period: given another 30 s, in which nothing comes.
        #expect(try Self.sendBody(channel, bytesPerSecond: 100_000, seconds: 30))
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }

    @Test func withoutAMinimumRateTheBodyTimeoutIsAFixedDeadline() throws {
        var limits = Self.limits
        limits.bodyMinimumBytesPerSecond = 0
        let channel = try Self.channel(.http1Connection, limits: limits)
        try channel.writeInbound(Self.head)
        #expect(try Self.sendBody(channel, bytesPerSecond: 100_000, seconds: 29))
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
    }
}
