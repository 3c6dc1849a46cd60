extension HTTP2TestServer {
    /// The stream count and `GOAWAY` life of one connection: pure decisions, no I/O.
    ///
    /// ### Implementation
    /// The connection's event loop feeds it facts (a stream opened, a stream closed, a stream was accepted, a
    /// `GOAWAY` was asked for) and performs the returned ``Action``. A quiescing connection remembers the last stream
    /// ID it announced, so a later `GOAWAY` can only lower it (RFC 9113 §6.8: the last stream ID must not increase),
    /// and it closes once its last open stream ends.
    struct ConnectionStateMachine {
        /// What the event loop must do next.
        enum Action: Equatable {
            case none
            /// Write `GOAWAY(NO_ERROR, lastStreamID)`; close the connection after the write when `thenClose`.
            case sendGoAway(lastStreamID: Int, thenClose: Bool)
            /// Close the connection gracefully: no stream is left.
            case close
        }

        private enum State: Equatable {
            /// Taking new streams; counts the streams accepted so far for ``goAwayEveryStreams``.
            case active(acceptedStreams: Int)
            /// `GOAWAY` sent: no new streams; closes when the last open stream ends.
            case quiescing(lastStreamID: Int)
            /// Closing or closed: nothing more to decide.
            case closed
        }

        /// After this many accepted streams the connection sends `GOAWAY`; `nil` never.
        let goAwayEveryStreams: Int?
        private var state: State = .active(acceptedStreams: 0)
        /// Streams whose channel is open, from the request's HEADERS until the stream closes.
        private(set) var openStreams = 0
        /// The highest client stream ID accepted so far; 0 before the first.
        private(set) var highestStreamID = 0

        init(goAwayEveryStreams: Int?) {
            self.goAwayEveryStreams = goAwayEveryStreams
        }

        /// The last stream ID announced in a `GOAWAY`, if one was sent.
        var lastStreamID: Int? {
            if case .quiescing(let lastStreamID) = self.state { lastStreamID } else { nil }
        }

        /// A request stream's channel opened (its HEADERS frame arrived).
        ///
        /// - Returns: The number of streams now open on this connection.
        mutating func streamOpened(streamID: Int) -> Int {
            self.highestStreamID = max(self.highestStreamID, streamID)
            self.openStreams += 1
            return self.openStreams
        }

        /// A request stream's channel closed, either way.
        mutating func streamClosed() -> Action {
            self.openStreams -= 1
            guard case .quiescing = self.state, self.openStreams == 0 else {
                return .none
            }
            self.state = .closed
            return .close
        }

        /// The HTTP/2 layer accepted a new client stream, after its HEADERS frame was fully processed (and after
        /// ``streamOpened(streamID:)``).
        mutating func streamAccepted(streamID: Int) -> Action {
            guard case .active(let acceptedStreams) = self.state else {
                return .none
            }
            let accepted = acceptedStreams + 1
            if let limit = self.goAwayEveryStreams, accepted >= limit {
                return self.quiesce(lastStreamID: streamID)
            }
            self.state = .active(acceptedStreams: accepted)
            return .none
        }

        /// Someone asked for a graceful `GOAWAY`.
        ///
        /// - Parameter lastStreamID: The last stream the client may consider processed; `nil` means the highest
        ///   stream accepted so far.
        mutating func goAwayRequested(lastStreamID: Int?) -> Action {
            let requested = lastStreamID ?? self.highestStreamID
            switch self.state {
            case .active:
                return self.quiesce(lastStreamID: requested)
            case .quiescing(let announced) where requested < announced:
                return self.quiesce(lastStreamID: requested)
            case .quiescing, .closed:
                return .none
            }
        }

        /// The TCP connection closed.
        mutating func connectionClosed() {
            self.state = .closed
        }

        private mutating func quiesce(lastStreamID: Int) -> Action {
            if self.openStreams == 0 {
                self.state = .closed
                return .sendGoAway(lastStreamID: lastStreamID, thenClose: true)
            }
            self.state = .quiescing(lastStreamID: lastStreamID)
            return .sendGoAway(lastStreamID: lastStreamID, thenClose: false)
        }
    }
}
