import NIOCore

/// Lets the flushes of one event-loop pass reach TLS as one: the first flush is passed on once the tasks already queued
/// on the loop have run, and the flushes in between join it.
///
/// Each HTTP/2 stream flushes its response on its own, through its child channel, so without this every response was a
/// TLS record and a write(2) of its own. Written for a benchmark: `relay-bench relay`'s single-message phase (200
/// streams in flight over 2 connections) went from 250–298 to 184–252 µs of relay CPU per request
/// (Docs/benchmarks.md). A flush waits at most for the tasks the loop had already queued, not for a timer.
///
/// A close passes the flush on first, so that what was written before it (a GOAWAY, the last response) leaves before
/// the connection ends.
final class FlushCoalescingHandler: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var flushPending = false

    func flush(context: ChannelHandlerContext) {
        guard !flushPending else { return }
        flushPending = true
        let pending = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            pending.value.handler.flushNow(context: pending.value.context)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        flushNow(context: context)
        context.close(mode: mode, promise: promise)
    }

    private func flushNow(context: ChannelHandlerContext) {
        guard flushPending else { return }
        flushPending = false
        context.flush()
    }
}
