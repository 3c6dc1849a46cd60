import NIOCore
import Testing

@testable import RelayApplication
@testable import RelayServer

struct HTTP2ConnectionLifecycleTests {
    typealias Lifecycle = HTTP2ConnectionLifecycle
    static let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let timeouts = Lifecycle.Timeouts(idle: .seconds(300), gracefulClose: .seconds(30))

    static func at(_ seconds: Int64) -> NIODeadline { start + .seconds(seconds) }

    @Test func aConnectionThatNeverOpensAStreamClosesAfterTheIdleTimeout() {
        var lifecycle = Lifecycle(timeouts: Self.timeouts, now: Self.start)
        #expect(lifecycle.initialWakeUp == Self.at(300))
        #expect(
            lifecycle.timerFired(now: Self.at(300))
                == .init(goAway: .init(lastStreamID: 0, ping: nil), wakeUp: nil, close: true))
        #expect(lifecycle.isClosed)
    }

    @Test func aBusyConnectionIsNotClosedAndTheIdleClockStartsWhenItsLastStreamCloses() {
        var lifecycle = Lifecycle(timeouts: Self.timeouts, now: Self.start)
        #expect(lifecycle.streamOpened(id: 1) == .none)
        #expect(lifecycle.streamOpened(id: 3) == .none)
        // Busy at the first wake-up: look again later, close nothing.
        #expect(lifecycle.timerFired(now: Self.at(300)) == .init(goAway: nil, wakeUp: Self.at(600), close: false))
        #expect(lifecycle.streamClosed(id: 1, now: Self.at(400)) == .none)
        #expect(lifecycle.streamClosed(id: 3, now: Self.at(500)) == .none)
        // Idle since 500: not yet due at 600, due at 800.
        #expect(lifecycle.timerFired(now: Self.at(600)) == .init(goAway: nil, wakeUp: Self.at(800), close: false))
        #expect(
            lifecycle.timerFired(now: Self.at(800))
                == .init(goAway: .init(lastStreamID: 3, ping: nil), wakeUp: nil, close: true))
    }

    @Test func aStreamOpenedWhileIdleCancelsTheIdleClose() {
        var lifecycle = Lifecycle(timeouts: Self.timeouts, now: Self.start)
        _ = lifecycle.streamOpened(id: 1)
        #expect(lifecycle.timerFired(now: Self.at(300)).close == false)
        #expect(!lifecycle.isClosed)
    }

    @Test func gracefulShutdownSendsTwoGoAwaysAroundAPingAndClosesWhenTheLastStreamEnds() {
        var lifecycle = Lifecycle(timeouts: Self.timeouts, now: Self.start)
        _ = lifecycle.streamOpened(id: 1)
        #expect(
            lifecycle.quiesce(now: Self.at(2))
                == .init(
                    goAway: .init(lastStreamID: Lifecycle.maximumStreamID, ping: Lifecycle.drainPing),
                    wakeUp: Self.at(32), close: false)
        )
        // A second quiesce changes nothing.
        #expect(lifecycle.quiesce(now: Self.at(3)) == .none)
        // A stream the client opened before it saw the first GOAWAY is still served.
        _ = lifecycle.streamOpened(id: 5)
        // Someone else's PING acknowledgement is not ours.
        #expect(lifecycle.pingAcknowledged(42, now: Self.at(4)) == .none)
        #expect(
            lifecycle.pingAcknowledged(Lifecycle.drainPing, now: Self.at(4))
                == .init(goAway: .init(lastStreamID: 5, ping: nil), wakeUp: nil, close: false))
        #expect(lifecycle.streamClosed(id: 1, now: Self.at(5)) == .none)
        #expect(
            lifecycle.streamClosed(id: 5, now: Self.at(6))
                == .init(goAway: .init(lastStreamID: 5, ping: nil), wakeUp: nil, close: true))
        #expect(lifecycle.isClosed)
    }

    @Test func gracefulShutdownOfAnIdleConnectionClosesOnThePingAcknowledgement() {
        var lifecycle = Lifecycle(timeouts: Self.timeouts, now: Self.start)
        _ = lifecycle.streamOpened(id: 7)
        _ = lifecycle.streamClosed(id: 7, now: Self.at(2))
        _ = lifecycle.quiesce(now: Self.at(3))
        // Closing the last stream while waiting for the acknowledgement does not close early: the client may still
        // be opening streams it sent before it saw the GOAWAY.
        #expect(
            lifecycle.pingAcknowledged(Lifecycle.drainPing, now: Self.at(4))
                == .init(goAway: .init(lastStreamID: 7, ping: nil), wakeUp: nil, close: true))
    }

    @Test func aClientThatNeverAnswersIsClosedAtTheGraceDeadline() {
        var lifecycle = Lifecycle(timeouts: Self.timeouts, now: Self.start)
        _ = lifecycle.streamOpened(id: 1)
        _ = lifecycle.quiesce(now: Self.at(10))
        #expect(lifecycle.timerFired(now: Self.at(20)) == .init(goAway: nil, wakeUp: Self.at(40), close: false))
        #expect(lifecycle.timerFired(now: Self.at(40)) == .init(goAway: nil, wakeUp: nil, close: true))
        // And after the acknowledgement, a stream that never finishes is cut at the same deadline.
        var acknowledged = Lifecycle(timeouts: Self.timeouts, now: Self.start)
        _ = acknowledged.streamOpened(id: 1)
        _ = acknowledged.quiesce(now: Self.at(10))
        _ = acknowledged.pingAcknowledged(Lifecycle.drainPing, now: Self.at(11))
        #expect(acknowledged.timerFired(now: Self.at(40)).close)
    }

    @Test func theConnectionEndingClosesOnceAndIgnoresLaterEvents() {
        var lifecycle = Lifecycle(timeouts: Self.timeouts, now: Self.start)
        #expect(lifecycle.connectionEnded() == .init(goAway: nil, wakeUp: nil, close: true))
        #expect(lifecycle.connectionEnded() == .none)
        #expect(lifecycle.quiesce(now: Self.at(1)) == .none)
        #expect(lifecycle.timerFired(now: Self.at(400)) == .none)
    }
}
