import NIOCore
import NIOEmbedded
import Testing

@testable import RelayServer

/// `ConnectionRefusalHandler` on an `EmbeddedChannel` whose clock the test moves: a refused connection is answered
/// (plain) or closed (TLS) as soon as it is active, and a plain one holds its descriptor no longer than it takes the
/// client to close its side, or ``ConnectionRefusalHandler/lingerTimeout``.
@Suite struct ConnectionRefusalHandlerTests {
    /// Records the close modes asked for, and lets only a whole close through (an `EmbeddedChannel` has no half-close
    /// of its own: it would close entirely).
    final class CloseRecorder: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var modes: [CloseMode] = []

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            self.modes.append(mode)
            if mode == .all {
                context.close(mode: mode, promise: promise)
            } else {
                promise?.succeed(())
            }
        }
    }

    static func refused(_ answer: ConnectionRefusalHandler.Answer) throws -> (EmbeddedChannel, CloseRecorder) {
        let channel = EmbeddedChannel()
        let recorder = CloseRecorder()
        try channel.pipeline.syncOperations.addHandlers(recorder, ConnectionRefusalHandler(answer: answer))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, recorder)
    }

    @Test func aPlainConnectionIsAnswered503AndItsSideShut() throws {
        let (channel, recorder) = try Self.refused(.httpServiceUnavailable)
        let answer = try #require(try channel.readOutbound(as: ByteBuffer.self))
        let text = String(buffer: answer)
        #expect(text.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"))
        #expect(text.contains("\r\nConnection: close\r\n"))
        #expect(text.contains("\r\nRetry-After: 5\r\n"))
        #expect(
            text.hasSuffix(
                #"{"errors":[{"code":"TOO_MANY_CONNECTIONS","message":"The relay has as many connections open as it may; try again shortly."}]}"#
            ))
        let length = try #require(text.split(separator: "\r\n\r\n", maxSplits: 1).last).utf8.count
        #expect(text.contains("\r\nContent-Length: \(length)\r\n"))
        #expect(recorder.modes == [.output])
        // What the client sends meanwhile is dropped, unread.
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\n\r\n"))
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        #expect(channel.isActive)
    }

    @Test func aPlainConnectionClosesWhenTheClientClosesItsSide() throws {
        let (channel, _) = try Self.refused(.httpServiceUnavailable)
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!channel.isActive)
    }

    @Test func aPlainConnectionWhoseClientStaysIsClosedAfterTheLinger() throws {
        let (channel, _) = try Self.refused(.httpServiceUnavailable)
        channel.embeddedEventLoop.advanceTime(by: ConnectionRefusalHandler.lingerTimeout - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test func aTLSConnectionIsClosedAtOnceWithoutAWord() throws {
        let (channel, recorder) = try Self.refused(.close)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        #expect(recorder.modes == [.all])
        #expect(!channel.isActive)
    }
}
