import NIOCore
import NIOHTTP2
import RelayApplication

/// Runs an `HTTP2ConnectionLifecycle` on one inbound HTTP/2 connection: sits behind `NIOHTTP2Handler` (which passes it
/// the connection-level frames), learns of streams through `streamDelegate`, and sends the GOAWAY and PING frames, arms
/// the one timer and closes the connection as the lifecycle decides. Lives on the connection's event loop.
final class HTTP2ConnectionManager: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private var lifecycle: HTTP2ConnectionLifecycle
    private let eventLoop: any EventLoop
    private var context: ChannelHandlerContext?
    private var timer: Scheduled<Void>?

    init(timeouts: HTTP2ConnectionLifecycle.Timeouts, eventLoop: any EventLoop) {
        self.lifecycle = HTTP2ConnectionLifecycle(timeouts: timeouts, now: .now())
        self.eventLoop = eventLoop
    }

    /// The delegate `NIOHTTP2Handler` reports stream openings and closings to (on this event loop).
    var streamDelegate: StreamDelegate {
        StreamDelegate(manager: NIOLoopBound(self, eventLoop: self.eventLoop))
    }

    struct StreamDelegate: NIOHTTP2StreamDelegate {
        // NIOLoopBound checks on every access that it happens on the connection's event loop, which is where
        // NIOHTTP2Handler calls its delegate.
        let manager: NIOLoopBound<HTTP2ConnectionManager>

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
            let manager = self.manager.value
            manager.run(manager.lifecycle.streamOpened(id: Int(id)))
        }

        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
            let manager = self.manager.value
            manager.run(manager.lifecycle.streamClosed(id: Int(id), now: .now()))
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if let wakeUp = self.lifecycle.initialWakeUp {
            self.arm(wakeUp)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.disarm()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        _ = self.lifecycle.connectionEnded()
        self.disarm()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = self.unwrapInboundIn(data)
        if case .ping(let ping, ack: true) = frame.payload {
            self.run(self.lifecycle.pingAcknowledged(ping.integer, now: .now()))
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ChannelShouldQuiesceEvent:
            self.run(self.lifecycle.quiesce(now: .now()))
        case let event as ChannelEvent where event == .inputClosed:
            self.run(self.lifecycle.connectionEnded())
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        self.run(self.lifecycle.connectionEnded())
    }

    private func run(_ decision: HTTP2ConnectionLifecycle.Decision) {
        guard let context = self.context else { return }
        if decision.close {
            self.disarm()
        } else if let wakeUp = decision.wakeUp {
            self.arm(wakeUp)
        }
        switch (decision.goAway, decision.close) {
        case (nil, false):
            return
        case (nil, true):
            context.close(promise: nil)
        case (let goAway?, true):
            // The decision may come from inside NIOHTTP2Handler while it processes the last stream's END_STREAM
            // frame, before that frame has been passed on and flushed. So write the GOAWAY on the next tick, after it,
            // and close only once the GOAWAY is written: nothing the client is owed is cut off.
            let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let frame = Self.goAwayFrame(goAway)
            context.eventLoop.execute {
                let context = bound.value
                let written = context.eventLoop.makePromise(of: Void.self)
                context.writeAndFlush(NIOAny(frame), promise: written)
                written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
            }
        case (let goAway?, false):
            context.write(self.wrapOutboundOut(Self.goAwayFrame(goAway)), promise: nil)
            if let ping = goAway.ping {
                let frame = HTTP2Frame(
                    streamID: .rootStream, payload: .ping(HTTP2PingData(withInteger: ping), ack: false))
                context.write(self.wrapOutboundOut(frame), promise: nil)
            }
            context.flush()
        }
    }

    private static func goAwayFrame(_ goAway: HTTP2ConnectionLifecycle.GoAway) -> HTTP2Frame {
        HTTP2Frame(
            streamID: .rootStream,
            payload: .goAway(lastStreamID: HTTP2StreamID(goAway.lastStreamID), errorCode: .noError, opaqueData: nil)
        )
    }

    private func disarm() {
        self.timer?.cancel()
        self.timer = nil
    }

    private func arm(_ deadline: NIODeadline) {
        self.timer?.cancel()
        let manager = NIOLoopBound(self, eventLoop: self.eventLoop)
        self.timer = self.eventLoop.scheduleTask(deadline: deadline) {
            let manager = manager.value
            manager.timer = nil
            manager.run(manager.lifecycle.timerFired(now: .now()))
        }
    }
}
