import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
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

    @Test func anHTTP2StreamAnsweredBeforeItsBodyEndsIsLeftToTheBodyTimeout() throws {
        let channel = try Self.channel(.http2Stream)
        try channel.writeInbound(Self.head)
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .unauthorized)))
        guard case .head(let response) = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no response head")
            return
        }
        #expect(response.headerFields[.connection] == nil)
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(!channel.isActive)
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
