import NIOCore
import NIOEmbedded
import Testing

@testable import RelayServer

/// `FlushCoalescingHandler` on an `EmbeddedChannel`, whose loop runs queued tasks only when the test says: the flushes
/// of one pass leave as one, after the tasks queued before them, nothing written is lost or reordered, and a close
/// sends what was written before it.
@Suite struct FlushCoalescingHandlerTests {
    /// Records, in order, the flushes and closes that reach the transport side.
    final class EventRecorder: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        var events: [String] = []

        func flush(context: ChannelHandlerContext) {
            events.append("flush")
            context.flush()
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            events.append("close")
            context.close(mode: mode, promise: promise)
        }
    }

    static func channel() throws -> (EmbeddedChannel, EventRecorder) {
        let channel = EmbeddedChannel()
        let recorder = EventRecorder()
        try channel.pipeline.syncOperations.addHandlers(recorder, FlushCoalescingHandler())
        return (channel, recorder)
    }

    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        var texts: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { texts.append(String(buffer: buffer)) }
        return texts
    }

    @Test func theFlushesOfOnePassLeaveAsOneAfterTheQueuedTasks() throws {
        let (channel, recorder) = try Self.channel()
        // A task already queued on the loop (another stream's response, say) runs before the flush and joins it.
        let loopBound = NIOLoopBound(channel, eventLoop: channel.eventLoop)
        channel.eventLoop.execute { loopBound.value.writeAndFlush(ByteBuffer(string: "queued"), promise: nil) }
        for text in ["a", "b", "c"] {
            channel.writeAndFlush(ByteBuffer(string: text), promise: nil)
        }
        // Nothing has left yet: the flush waits for the loop's pass.
        #expect(recorder.events.isEmpty)
        #expect(try Self.written(channel).isEmpty)
        channel.embeddedEventLoop.run()
        #expect(recorder.events == ["flush"])
        #expect(try Self.written(channel) == ["a", "b", "c", "queued"])

        // A flush after that one is a new one.
        channel.writeAndFlush(ByteBuffer(string: "d"), promise: nil)
        channel.embeddedEventLoop.run()
        #expect(recorder.events == ["flush", "flush"])
        #expect(try Self.written(channel) == ["d"])
        _ = try channel.finish()
    }

    @Test func aCloseSendsWhatWasWrittenBeforeIt() throws {
        let (channel, recorder) = try Self.channel()
        channel.writeAndFlush(ByteBuffer(string: "goaway"), promise: nil)
        channel.close(promise: nil)
        #expect(recorder.events == ["flush", "close"])
        #expect(try Self.written(channel) == ["goaway"])
        // The flush the loop still holds finds nothing left to send.
        channel.embeddedEventLoop.run()
        #expect(recorder.events == ["flush", "close"])
    }

    @Test func aCloseWithNothingPendingIsOnlyAClose() throws {
        let (channel, recorder) = try Self.channel()
        channel.write(ByteBuffer(string: "unflushed"), promise: nil)
        channel.close(promise: nil)
        #expect(recorder.events == ["close"])
    }
}
