package import NIOCore
import RelayApplication

/// When an inbound HTTP/2 connection says GOAWAY and closes: after it has been idle (no open stream) for the idle
/// timeout, and on graceful shutdown. Pure: the owner (`HTTP2ConnectionManager`) feeds it stream and frame events with
/// the current time and runs the decision it returns.
///
/// Graceful shutdown follows RFC 9113 §6.8: a first GOAWAY naming the largest stream id with a PING, so that streams
/// the client opened while the GOAWAY was on its way are still served; when the PING's acknowledgement comes back, a
/// second GOAWAY naming the last stream actually opened. The connection closes once its streams are done, or at the
/// grace deadline, whichever is first, so a client that never answers cannot hold the relay open.
package struct HTTP2ConnectionLifecycle: Sendable {
    package struct Timeouts: Sendable, Equatable {
        /// A connection without open streams for this long is closed (with a GOAWAY).
        package var idle: TimeAmount
        /// From the start of a graceful shutdown until the connection is closed whatever its streams are doing.
        package var gracefulClose: TimeAmount

        package init(idle: TimeAmount, gracefulClose: TimeAmount) {
            self.idle = idle
            self.gracefulClose = gracefulClose
        }
    }

    /// A GOAWAY frame to send: streams above `lastStreamID` were not processed and may be retried by the client.
    package struct GoAway: Sendable, Equatable {
        package var lastStreamID: Int
        /// A PING to send with the GOAWAY (the first of a graceful shutdown); its acknowledgement ends the race.
        package var ping: UInt64?
    }

    /// What the owner does, in this order: send the GOAWAY, (re)arm its single timer, close. With a GOAWAY, the
    /// connection closes once the GOAWAY has been written (so whatever was written before it goes out too); without
    /// one, at once.
    package struct Decision: Sendable, Equatable {
        package var goAway: GoAway?
        /// The time to call `timerFired(now:)` next; replaces any earlier wake-up.
        package var wakeUp: NIODeadline?
        package var close: Bool

        package static let none = Decision(goAway: nil, wakeUp: nil, close: false)
    }

    private enum Phase: Sendable, Equatable {
        /// Serving; `idleSince` is set while no stream is open.
        case serving(idleSince: NIODeadline?)
        /// First GOAWAY and PING (`drainPing`) sent; waiting for the PING's acknowledgement.
        case awaitingPingAck(deadline: NIODeadline)
        /// Final GOAWAY sent; the connection closes when its last stream does.
        case draining(deadline: NIODeadline)
        case closed
    }

    /// The largest stream id the client may open: 2^31 - 1.
    package static let maximumStreamID = Int(Int32.max)
    /// The payload of the graceful-shutdown PING (ASCII "pr-drain").
    package static let drainPing: UInt64 = 0x7072_2d64_7261_696e

    private let timeouts: Timeouts
    private var phase: Phase
    package private(set) var openStreams = 0
    package private(set) var lastStreamID = 0

    package init(timeouts: Timeouts, now: NIODeadline) {
        self.timeouts = timeouts
        self.phase = .serving(idleSince: now)
    }

    /// The first wake-up, for the idle timeout of a connection that never opens a stream.
    package var initialWakeUp: NIODeadline? {
        guard case .serving(let idleSince?) = self.phase else { return nil }
        return idleSince + self.timeouts.idle
    }

    package var isClosed: Bool { self.phase == .closed }

    package mutating func streamOpened(id: Int) -> Decision {
        self.openStreams += 1
        self.lastStreamID = max(self.lastStreamID, id)
        if case .serving = self.phase {
            self.phase = .serving(idleSince: nil)
        }
        return .none
    }

    package mutating func streamClosed(id: Int, now: NIODeadline) -> Decision {
        self.openStreams = max(0, self.openStreams - 1)
        guard self.openStreams == 0 else { return .none }
        switch self.phase {
        case .serving:
            // The timer already armed wakes up, sees the new idle start and re-arms for it: no timer churn per stream.
            self.phase = .serving(idleSince: now)
            return .none
        case .draining:
            // The GOAWAY is repeated (same last stream id) so that the owner can close once it is written: after the
            // last stream's final frames, which must not be cut off.
            self.phase = .closed
            return Decision(goAway: GoAway(lastStreamID: self.lastStreamID, ping: nil), wakeUp: nil, close: true)
        case .awaitingPingAck, .closed:
            return .none
        }
    }

    /// The server is shutting down (ChannelShouldQuiesceEvent).
    package mutating func quiesce(now: NIODeadline) -> Decision {
        guard case .serving = self.phase else { return .none }
        let deadline = now + self.timeouts.gracefulClose
        self.phase = .awaitingPingAck(deadline: deadline)
        return Decision(
            goAway: GoAway(lastStreamID: Self.maximumStreamID, ping: Self.drainPing), wakeUp: deadline, close: false)
    }

    package mutating func pingAcknowledged(_ data: UInt64, now: NIODeadline) -> Decision {
        guard case .awaitingPingAck(let deadline) = self.phase, data == Self.drainPing else { return .none }
        let goAway = GoAway(lastStreamID: self.lastStreamID, ping: nil)
        if self.openStreams == 0 {
            self.phase = .closed
            return Decision(goAway: goAway, wakeUp: nil, close: true)
        }
        self.phase = .draining(deadline: deadline)
        return Decision(goAway: goAway, wakeUp: nil, close: false)
    }

    package mutating func timerFired(now: NIODeadline) -> Decision {
        switch self.phase {
        case .serving(idleSince: nil):
            // Busy: look again one idle timeout from now (a stream that closes meanwhile only records the time).
            return Decision(goAway: nil, wakeUp: now + self.timeouts.idle, close: false)
        case .serving(let idleSince?):
            let due = idleSince + self.timeouts.idle
            guard now >= due else { return Decision(goAway: nil, wakeUp: due, close: false) }
            self.phase = .closed
            return Decision(goAway: GoAway(lastStreamID: self.lastStreamID, ping: nil), wakeUp: nil, close: true)
        case .awaitingPingAck(let deadline), .draining(let deadline):
            guard now >= deadline else { return Decision(goAway: nil, wakeUp: deadline, close: false) }
            self.phase = .closed
            return Decision(goAway: nil, wakeUp: nil, close: true)
        case .closed:
            return .none
        }
    }

    /// The client closed its side, or the connection failed: close now.
    package mutating func connectionEnded() -> Decision {
        guard self.phase != .closed else { return .none }
        self.phase = .closed
        return Decision(goAway: nil, wakeUp: nil, close: true)
    }
}
