extension HTTP2Pool {
    /// Identifies one request within a pool.
    package typealias RequestID = UInt64
    /// Identifies one connection within a pool.
    package typealias ConnectionID = UInt64

    /// How a stream ended, as the backend saw it on the wire.
    package enum StreamEnd: Sendable, Equatable {
        /// The whole response arrived (END_STREAM), whatever followed it: an early answer followed by
        /// RST_STREAM(NO_ERROR) is an answer (RFC 9113 §8.1).
        case answered
        /// The server did not process the request: RST_STREAM(REFUSED_STREAM), a stream above a GOAWAY's last stream
        /// id, or a request that never left. Safe to send again, and not an attempt.
        case notProcessed
        /// The stream ended without a whole response: the outcome is unknown (another reset code, a lost connection).
        case failed(HTTP2Error)
    }

    /// The pool's decisions: admission, which connection takes a stream, when to open and close connections,
    /// PINGs, GOAWAY, deadlines and shutdown.
    ///
    /// ### Overview
    /// Requests wait in a FIFO queue until a connection has a free stream. A connection takes streams once the
    /// server's SETTINGS arrived (before that its limit is unknown, and APNs allows one stream until a request with a
    /// valid token succeeded), and at most `min(server's SETTINGS_MAX_CONCURRENT_STREAMS, maxConcurrentStreams)` at a
    /// time, which the server may change at any moment. The least loaded connection with room takes the next request;
    /// another connection is opened only when every connection is full and the queue holds more than the connections
    /// being opened can take, up to `maxConnections`, and not before the back-off after failed connects has passed.
    ///
    /// A stream the server did not process (REFUSED_STREAM, above a GOAWAY's last stream id) goes back to the front
    /// of the queue without counting as an attempt; one that ended otherwise without its response fails as "outcome
    /// unknown", for the caller's retry policy to judge. A connection that received GOAWAY, reached its maximum age or
    /// ran out of stream ids takes no new streams and closes when its last one ends. A connection on which nothing
    /// arrived for `pingInterval` gets a PING; one whose PING is not acknowledged within `pingTimeout` is closed and
    /// its streams fail as outcome unknown. Idle connections close after `maxIdle`.
    ///
    /// ### Implementation
    /// A value type: every event is a `mutating` method taking the current instant and returning actions as plain
    /// data; the machine performs nothing, so tests feed it events and assert actions without sockets. Every request
    /// ends in exactly one `.finishRequest`, `.failRequest` or `.cancelStream` action, which is what lets the owner
    /// resume each caller exactly once. Deadlines sit in a binary heap that is rebuilt from the live requests when
    /// finished ones outnumber them, so memory follows the requests alive, not the requests seen.
    package struct StateMachine: Sendable {
        package enum Action: Equatable, Sendable {
            /// Open a connection with this id; report ``connectionEstablished(_:now:)`` or
            /// ``connectionClosed(_:error:now:)``.
            case openConnection(ConnectionID)
            /// Open a stream for the request on the connection.
            case startStream(RequestID, ConnectionID)
            /// The request's response arrived: resume its caller with it.
            case finishRequest(RequestID)
            /// Resume the caller with the error; the request has no stream (any more).
            case failRequest(RequestID, HTTP2Error)
            /// Reset the request's stream (RST_STREAM(CANCEL), once) and resume its caller with the error.
            case cancelStream(RequestID, ConnectionID, HTTP2Error)
            /// Send a PING on the connection; report ``pingAcknowledged(_:now:)``.
            case sendPing(ConnectionID)
            /// Close the connection; `graceful` sends GOAWAY first. Its streams were already dealt with: report
            /// nothing more for it.
            case closeConnection(ConnectionID, graceful: Bool)
            /// Nothing is left: end the owner.
            case close
        }

        /// The numbers the machine decides by.
        package struct Settings: Sendable, Equatable {
            package var maxConnections: Int
            /// The client's own cap on streams per connection.
            package var maxConcurrentStreams: Int
            package var maxQueued: Int
            /// Streams a connection takes before the server's SETTINGS arrived: 0 waits for them.
            package var streamsBeforeSettings: Int
            package var connectTimeout: Duration
            /// Idle connections close after this; `nil`: never.
            package var maxIdle: Duration?
            /// Connections take no new streams after this age; `nil`: no limit.
            package var maxAge: Duration?
            package var pingInterval: Duration?
            package var pingTimeout: Duration
            package var reconnectBackoff: Duration
            package var reconnectBackoffLimit: Duration
            /// How often one request may be found not processed before it fails.
            package var maxResends: Int
            /// The shortest time between two retirements of connections for requests that ask for a fresh one
            /// (``requestSubmitted(_:deadline:freshConnection:now:)``).
            package var freshConnectionInterval: Duration

            package init(
                maxConnections: Int,
                maxConcurrentStreams: Int,
                maxQueued: Int,
                streamsBeforeSettings: Int = 0,
                connectTimeout: Duration = .seconds(10),
                maxIdle: Duration? = nil,
                maxAge: Duration? = nil,
                pingInterval: Duration? = nil,
                pingTimeout: Duration = .seconds(10),
                reconnectBackoff: Duration = .milliseconds(100),
                reconnectBackoffLimit: Duration = .seconds(10),
                maxResends: Int = 5,
                freshConnectionInterval: Duration = Settings.defaultFreshConnectionInterval
            ) {
                self.maxConnections = max(1, maxConnections)
                self.maxConcurrentStreams = max(1, maxConcurrentStreams)
                self.maxQueued = max(0, maxQueued)
                self.streamsBeforeSettings = max(0, streamsBeforeSettings)
                self.connectTimeout = connectTimeout
                self.maxIdle = maxIdle
                self.maxAge = maxAge
                self.pingInterval = pingInterval
                self.pingTimeout = pingTimeout
                self.reconnectBackoff = reconnectBackoff
                self.reconnectBackoffLimit = reconnectBackoffLimit
                self.maxResends = maxResends
                self.freshConnectionInterval = freshConnectionInterval
            }

            /// At most one retirement of connections per 10 s for requests that ask for a fresh connection: APNs
            /// answers `Shutdown` or `IdleTimeout` rarely, but a key that gets `UnrelatedKeyIdInToken` on every request
            /// would otherwise close and open connections continuously.
            package static let defaultFreshConnectionInterval: Duration = .seconds(10)

            /// The settings of the nghttp2 backend, which sees every connection.
            package init(nghttp2 configuration: HTTP2PoolConfiguration) {
                self.init(
                    maxConnections: configuration.maxConnections,
                    maxConcurrentStreams: configuration.maxConcurrentStreams,
                    maxQueued: configuration.maxQueued,
                    connectTimeout: configuration.connectTimeout,
                    maxIdle: configuration.maxIdleAge,
                    maxAge: configuration.maxLifetime,
                    pingInterval: configuration.pingInterval,
                    pingTimeout: configuration.pingTimeout,
                    reconnectBackoff: configuration.reconnectBackoff,
                    reconnectBackoffLimit: configuration.reconnectBackoffLimit
                )
            }
        }

        private enum Phase: Sendable, Equatable {
            case running
            /// Admitting nothing; queued and in-flight requests finish until `deadline`.
            case draining(deadline: Moment)
            case closed
        }

        struct Connection: Sendable {
            enum State: Sendable, Equatable {
                case connecting(since: Moment)
                case ready
                /// Takes no new streams (GOAWAY, age, stream ids used up); closes when its last stream ends.
                case draining
            }
            let id: ConnectionID
            var state: State
            /// Streams it may carry now: the server's limit capped by ours, or `streamsBeforeSettings` until SETTINGS.
            var limit: Int
            /// Streams it carries now (the requests whose state is `.active` on it).
            var active = 0
            /// The server's first SETTINGS arrived.
            var settled = false
            var openedAt: Moment
            var lastReceived: Moment
            var idleSince: Moment?
            var pingSentAt: Moment?

            var hasRoom: Bool { state == .ready && active < limit }
        }

        private struct Request: Sendable {
            enum State: Sendable, Equatable {
                case queued
                case active(ConnectionID)
            }
            var deadline: Moment
            var state: State
            var resends = 0
        }

        package let settings: Settings
        private var phase: Phase = .running
        private var requests: [RequestID: Request] = [:]
        private var queue = RequestQueue()
        private var deadlines = DeadlineHeap()
        private var connections = ConnectionTable()
        private var nextConnectionID: ConnectionID = 1
        private var connectFailures = 0
        private var reconnectAt: Moment?
        private var lastConnectError: HTTP2Error?
        /// When connections were last retired for a request that asked for a fresh one.
        private var lastFreshRetirement: Moment?

        package init(settings: Settings) {
            self.settings = settings
            self.epoch = .now
        }

        /// The origin of the machine's ``Moment``s; any instant would do, decisions depend only on differences.
        private let epoch: ContinuousClock.Instant

        /// An instant as the machine keeps it; an owner converts its loop turn's instant once and passes the result
        /// to the events it feeds in that turn.
        func moment(_ instant: ContinuousClock.Instant) -> Moment {
            Moment(nanoseconds: Moment.nanoseconds(epoch.duration(to: instant)))
        }

        private func instant(_ moment: Moment) -> ContinuousClock.Instant {
            epoch + .nanoseconds(moment.nanoseconds)
        }

        // MARK: - Reading

        /// Requests with a stream now.
        package var inFlightCount: Int { requests.count - queue.count }
        /// Requests waiting for a stream.
        package var queuedCount: Int { queue.count }
        /// Connections open or being opened.
        package var connectionCount: Int { connections.count }
        package var isClosed: Bool { phase == .closed }
        package var isAdmitting: Bool { phase == .running }

        /// The earliest instant at which ``tick(now:)`` has something to do.
        package var nextDeadline: ContinuousClock.Instant? {
            nextMoment.map(instant)
        }

        private var nextMoment: Moment? {
            var earliest = deadlines.peek?.deadline
            func consider(_ instant: Moment?) {
                guard let instant else { return }
                earliest = earliest.map { min($0, instant) } ?? instant
            }
            if case .draining(let deadline) = phase { consider(deadline) }
            if queue.count > 0 { consider(reconnectAt) }
            for connection in connections.all {
                switch connection.state {
                case .connecting(let since):
                    consider(since + settings.connectTimeout)
                case .ready, .draining:
                    if let sent = connection.pingSentAt {
                        consider(sent + settings.pingTimeout)
                    } else if let interval = settings.pingInterval {
                        consider(connection.lastReceived + interval)
                    }
                    if connection.state == .ready, let maxAge = settings.maxAge {
                        consider(connection.openedAt + maxAge)
                    }
                    if let idle = connection.idleSince, let maxIdle = settings.maxIdle { consider(idle + maxIdle) }
                }
            }
            return earliest
        }

        // MARK: - Requests

        /// A caller submitted a request that must finish by `deadline`. With `freshConnection` (APNs answered the
        /// last attempt with `Shutdown`, `IdleTimeout` or `UnrelatedKeyIdInToken`: the connection is not to be
        /// trusted) every connection opened before `now` stops taking streams and closes when its last one ends, so
        /// the request goes out on a connection opened from now on; but at most once per
        /// ``Settings/freshConnectionInterval``: within it, such a request takes the connections there are (those
        /// opened by the last retirement, once they are up), so a steady stream of such answers cannot churn
        /// connections.
        package mutating func requestSubmitted(
            _ id: RequestID,
            deadline: ContinuousClock.Instant,
            freshConnection: Bool = false,
            now: ContinuousClock.Instant
        ) -> [Action] {
            requestSubmitted(id, deadline: moment(deadline), freshConnection: freshConnection, at: moment(now))
        }

        /// ``requestSubmitted(_:deadline:freshConnection:now:)`` with instants the owner converted once per loop turn
        /// (``moment(_:)``), rather than once per event.
        mutating func requestSubmitted(
            _ id: RequestID,
            deadline: Moment,
            freshConnection: Bool = false,
            at now: Moment
        ) -> [Action] {
            guard phase == .running else {
                return [.failRequest(id, HTTP2Error(.shuttingDown, detail: "the pool is shutting down"))]
            }
            if deadline <= now {
                return [
                    .failRequest(id, HTTP2Error(.timeout, detail: "the deadline passed before the request started"))
                ]
            }
            var actions: [Action] = []
            if freshConnection, freshRetirementAllowed(at: now) {
                for connection in connections.all where connection.state == .ready && connection.openedAt < now {
                    actions += drainConnection(connection.id, now: now)
                    lastFreshRetirement = now
                }
            }
            // Fast path: nothing waits and a connection has room.
            if queue.count == 0, let connectionID = leastLoadedConnectionWithRoom() {
                requests[id] = Request(deadline: deadline, state: .active(connectionID))
                pushDeadline(deadline, id)
                activate(id, on: connectionID)
                guard !actions.isEmpty else { return [.startStream(id, connectionID)] }
                actions.append(.startStream(id, connectionID))
                return actions
            }
            if let refusal = connectFailureRefusal(now: now) {
                return actions + [.failRequest(id, refusal)]
            }
            guard queue.count < settings.maxQueued else {
                return actions + [
                    .failRequest(
                        id, HTTP2Error(.overloaded, detail: "\(settings.maxQueued) requests are already waiting"))
                ]
            }
            requests[id] = Request(deadline: deadline, state: .queued)
            pushDeadline(deadline, id)
            queue.pushBack(id)
            actions.append(contentsOf: dispatch(now: now))
            return actions
        }

        /// Whether a request asking for a fresh connection at `now` may have the older connections retired: not within
        /// ``Settings/freshConnectionInterval`` of the last retirement.
        private func freshRetirementAllowed(at now: Moment) -> Bool {
            guard let last = lastFreshRetirement else { return true }
            return now >= last + settings.freshConnectionInterval
        }

        /// For a backend that opens fresh connections itself (libcurl's `CURLOPT_FRESH_CONNECT`): whether a request
        /// that asks for one at `now` gets one, under the same limit as
        /// ``requestSubmitted(_:deadline:freshConnection:now:)``; a `true` counts as a retirement.
        package mutating func freshConnectionGranted(now: ContinuousClock.Instant) -> Bool {
            let now = moment(now)
            guard freshRetirementAllowed(at: now) else { return false }
            lastFreshRetirement = now
            return true
        }

        /// The caller's task was cancelled.
        package mutating func requestCancelled(_ id: RequestID, now: ContinuousClock.Instant) -> [Action] {
            let now = moment(now)
            let cancelled = HTTP2Error(.cancelled, detail: "the caller's task was cancelled")
            guard let request = requests[id] else { return [] }
            switch request.state {
            case .queued:
                forget(id)
                return [.failRequest(id, cancelled)] + closeIfDrained()
            case .active(let connectionID):
                return abandonAndDispatch(id, on: connectionID, cancelled, now: now)
            }
        }

        /// The request's response outgrew `limit` bytes while its stream is open: the stream is reset (once) and the
        /// request fails. The request ends here, so the caller's cancellation, its deadline or the stream's close
        /// arriving afterwards (before the reset went out) find nothing left to reset: a request's stream is reset
        /// at most once.
        package mutating func responseTooLarge(_ id: RequestID, limit: Int, now: ContinuousClock.Instant) -> [Action] {
            responseTooLarge(id, limit: limit, at: moment(now))
        }

        /// ``responseTooLarge(_:limit:now:)`` with an instant the owner converted once per loop turn.
        mutating func responseTooLarge(_ id: RequestID, limit: Int, at now: Moment) -> [Action] {
            guard let request = requests[id], case .active(let connectionID) = request.state else { return [] }
            let tooLarge = HTTP2Error(.responseTooLarge, detail: "the response exceeded \(limit) bytes")
            return abandonAndDispatch(id, on: connectionID, tooLarge, now: now)
        }

        /// Ends an active request with `error`: its stream is reset (the one reset it gets), its place on the
        /// connection freed and the request forgotten.
        private mutating func abandon(
            _ id: RequestID, on connectionID: ConnectionID, _ error: HTTP2Error, now: Moment
        ) -> [Action] {
            var actions: [Action] = [.cancelStream(id, connectionID, error)]
            actions += streamRemoved(id, from: connectionID, now: now)
            forget(id)
            return actions
        }

        /// ``abandon(_:on:_:now:)``, then the freed place goes to the queue and a drained pool closes.
        private mutating func abandonAndDispatch(
            _ id: RequestID, on connectionID: ConnectionID, _ error: HTTP2Error, now: Moment
        ) -> [Action] {
            var actions = abandon(id, on: connectionID, error, now: now)
            // Appended in place: `a + b + c` would copy the list once per `+`.
            actions.append(contentsOf: dispatch(now: now))
            actions.append(contentsOf: closeIfDrained())
            return actions
        }

        /// A stream ended; see ``StreamEnd``.
        package mutating func streamEnded(_ id: RequestID, _ end: StreamEnd, now: ContinuousClock.Instant) -> [Action] {
            streamEnded(id, end, at: moment(now))
        }

        /// ``streamEnded(_:_:now:)`` with an instant the owner converted once per loop turn.
        mutating func streamEnded(_ id: RequestID, _ end: StreamEnd, at now: Moment) -> [Action] {
            guard let request = requests[id], case .active(let connectionID) = request.state else { return [] }
            var actions: [Action] = []
            switch end {
            case .answered:
                forget(id)
                actions.append(.finishRequest(id))
            case .failed(let error):
                forget(id)
                actions.append(.failRequest(id, error))
            case .notProcessed:
                if request.resends >= settings.maxResends {
                    forget(id)
                    let detail = "the server refused the request \(request.resends + 1) times"
                    actions.append(.failRequest(id, HTTP2Error(.streamReset, detail: detail)))
                } else if request.deadline <= now {
                    forget(id)
                    actions.append(.failRequest(id, HTTP2Error(.timeout, detail: "the deadline passed")))
                } else {
                    requests[id]?.state = .queued
                    requests[id]?.resends += 1
                    queue.pushFront(id)
                }
            }
            // The request's end first, then what it means for its connection.
            actions += streamRemoved(id, from: connectionID, now: now)
            // Appended in place: `a + b + c` would copy the list once per `+`.
            actions.append(contentsOf: dispatch(now: now))
            actions.append(contentsOf: closeIfDrained())
            return actions
        }

        // MARK: - Connections

        /// The connection is up (TCP, TLS with ALPN h2, the client preface sent).
        package mutating func connectionEstablished(_ id: ConnectionID, now: ContinuousClock.Instant) -> [Action] {
            let now = moment(now)
            guard var connection = connections[id], case .connecting = connection.state else { return [] }
            connection.state = .ready
            connection.limit = settings.streamsBeforeSettings
            connection.lastReceived = now
            connection.idleSince = now
            connections[id] = connection
            return dispatch(now: now)
        }

        /// The server's SETTINGS arrived, first or changed: `maxConcurrentStreams` is its current
        /// SETTINGS_MAX_CONCURRENT_STREAMS, `nil` when it sets none.
        package mutating func settingsReceived(
            _ id: ConnectionID,
            maxConcurrentStreams: Int?,
            now: ContinuousClock.Instant
        ) -> [Action] {
            let now = moment(now)
            guard var connection = connections[id] else { return [] }
            connection.limit = min(settings.maxConcurrentStreams, max(0, maxConcurrentStreams ?? Int.max))
            connection.lastReceived = now
            if !connection.settled {
                // The server spoke HTTP/2 to us: connecting works again, and the back-off starts over.
                connection.settled = true
                connectFailures = 0
                reconnectAt = nil
                lastConnectError = nil
            }
            connections[id] = connection
            return dispatch(now: now)
        }

        /// Frames arrived on the connection: it is alive.
        package mutating func framesReceived(_ id: ConnectionID, now: ContinuousClock.Instant) {
            let now = moment(now)
            connections[id]?.lastReceived = now
        }

        /// The server acknowledged our PING.
        package mutating func pingAcknowledged(_ id: ConnectionID, now: ContinuousClock.Instant) {
            let now = moment(now)
            connections[id]?.pingSentAt = nil
            connections[id]?.lastReceived = now
        }

        /// GOAWAY arrived: streams up to its last stream id may still complete; the backend reports the others as
        /// ``StreamEnd/notProcessed``. The connection takes no new streams.
        package mutating func goAwayReceived(_ id: ConnectionID, now: ContinuousClock.Instant) -> [Action] {
            let now = moment(now)
            return drainConnection(id, now: now) + dispatch(now: now) + closeIfDrained()
        }

        /// The connection cannot open more streams (its stream ids are used up): it takes no new ones.
        package mutating func connectionExhausted(_ id: ConnectionID, now: ContinuousClock.Instant) -> [Action] {
            let now = moment(now)
            return drainConnection(id, now: now) + dispatch(now: now)
        }

        /// The connection closed or could not be made. Its streams fail with `error` (outcome unknown); a connect
        /// that failed delays the next one.
        package mutating func connectionClosed(
            _ id: ConnectionID,
            error: HTTP2Error,
            now: ContinuousClock.Instant
        ) -> [Action] {
            connectionClosed(id, error: error, at: moment(now))
        }

        private mutating func connectionClosed(_ id: ConnectionID, error: HTTP2Error, at now: Moment) -> [Action] {
            guard let connection = connections.remove(id) else { return [] }
            var actions: [Action] = []
            // A connection that ends before the server's first SETTINGS (refused, or closed right after the
            // handshake) is a failed connect: the next one waits for the back-off rather than following at once.
            if !connection.settled {
                actions += connectFailed(error, now: now)
            }
            if connection.active > 0 {
                // Rare (a lost connection), so the requests are found by a scan rather than kept per connection.
                let lost = requests.compactMap { $0.value.state == .active(id) ? $0.key : nil }.sorted()
                for requestID in lost {
                    forget(requestID)
                    actions.append(.failRequest(requestID, error))
                }
            }
            // Appended in place: `a + b + c` would copy the list once per `+`.
            actions.append(contentsOf: dispatch(now: now))
            actions.append(contentsOf: closeIfDrained())
            return actions
        }

        // MARK: - Time and shutdown

        /// Time passed: deadlines, connect timeouts, PINGs, maximum age, idle connections, back-off, the drain.
        package mutating func tick(now: ContinuousClock.Instant) -> [Action] {
            tick(at: moment(now))
        }

        private mutating func tick(at now: Moment) -> [Action] {
            var actions: [Action] = []
            while let next = deadlines.peek, next.deadline <= now {
                deadlines.pop()
                guard let request = requests[next.id], request.deadline == next.deadline else { continue }
                let timeout = HTTP2Error(.timeout, detail: "the request's deadline passed", requestSent: true)
                switch request.state {
                case .queued:
                    forget(next.id)
                    actions.append(.failRequest(next.id, HTTP2Error(.timeout, detail: "no stream became free in time")))
                case .active(let connectionID):
                    actions += abandon(next.id, on: connectionID, timeout, now: now)
                }
            }
            deadlines.compact(liveCount: requests.count) { requests[$0] != nil }

            for id in connections.ids {
                guard let connection = connections[id] else { continue }
                switch connection.state {
                case .connecting(let since):
                    if since + settings.connectTimeout <= now {
                        actions.append(.closeConnection(id, graceful: false))
                        actions += connectionClosed(
                            id, error: HTTP2Error(.connectFailed, detail: "connect timed out"), at: now)
                    }
                    continue
                case .ready, .draining:
                    break
                }
                if let sent = connection.pingSentAt, sent + settings.pingTimeout <= now {
                    actions.append(.closeConnection(id, graceful: false))
                    let lost = HTTP2Error(.connectionLost, detail: "PING not acknowledged; outcome unknown")
                    actions += connectionClosed(id, error: lost, at: now)
                    continue
                }
                if connection.pingSentAt == nil, let interval = settings.pingInterval,
                    connection.lastReceived + interval <= now
                {
                    connections[id]?.pingSentAt = now
                    actions.append(.sendPing(id))
                }
                if connection.state == .ready, let maxAge = settings.maxAge, connection.openedAt + maxAge <= now {
                    actions += drainConnection(id, now: now)
                    continue
                }
                if let idle = connection.idleSince, let maxIdle = settings.maxIdle, idle + maxIdle <= now {
                    connections[id] = nil
                    actions.append(.closeConnection(id, graceful: true))
                }
            }

            if case .draining(let deadline) = phase, deadline <= now {
                let late = HTTP2Error(.shuttingDown, detail: "the drain deadline passed")
                for (id, request) in requests.sorted(by: { $0.key < $1.key }) {
                    switch request.state {
                    case .queued: actions.append(.failRequest(id, late))
                    case .active(let connectionID): actions.append(.cancelStream(id, connectionID, late))
                    }
                }
                requests.removeAll()
                queue.removeAll()
                deadlines.removeAll()
                for id in connections.ids { connections[id]?.active = 0 }
            }
            // Appended in place: `a + b + c` would copy the list once per `+`.
            actions.append(contentsOf: dispatch(now: now))
            actions.append(contentsOf: closeIfDrained())
            return actions
        }

        /// Graceful shutdown: admit nothing new; queued and in-flight requests may finish until `deadline`.
        package mutating func shutdownRequested(
            deadline: ContinuousClock.Instant,
            now: ContinuousClock.Instant
        ) -> [Action] {
            let deadline = moment(deadline)
            let now = moment(now)
            switch phase {
            case .running: phase = .draining(deadline: deadline)
            case .draining(let current): phase = .draining(deadline: min(current, deadline))
            case .closed: return []
            }
            return tick(at: now)
        }

        // MARK: - Decisions

        /// Starts queued requests on connections with room, and opens connections when they are needed.
        private mutating func dispatch(now: Moment) -> [Action] {
            guard phase != .closed else { return [] }
            var actions: [Action] = []
            while queue.count > 0, let connectionID = leastLoadedConnectionWithRoom() {
                guard let id = queue.popFront() else { break }
                requests[id]?.state = .active(connectionID)
                activate(id, on: connectionID)
                actions.append(.startStream(id, connectionID))
            }
            guard queue.count > 0 else { return actions }
            if let reconnectAt {
                guard now >= reconnectAt else { return actions }
                // The back-off has passed: forget its instant (a past one would make every loop turn a timer turn),
                // keeping the count of failures so that the next back-off is longer.
                self.reconnectAt = nil
            }
            while queue.count > capacityBeingOpened, openConnections < settings.maxConnections {
                let id = nextConnectionID
                nextConnectionID += 1
                connections.append(
                    Connection(
                        id: id,
                        state: .connecting(since: now),
                        limit: 0,
                        openedAt: now,
                        lastReceived: now
                    ))
                actions.append(.openConnection(id))
            }
            return actions
        }

        /// Connections that count against `maxConnections`: all but the draining ones.
        private var openConnections: Int {
            connections.all.count { $0.state != .draining }
        }

        /// What the connections being opened, or waiting for their SETTINGS, will take at most.
        private var capacityBeingOpened: Int {
            connections.all.reduce(0) { sum, connection in
                switch connection.state {
                case .connecting: sum + settings.maxConcurrentStreams
                case .ready where connection.limit == 0 && connection.active == 0: sum + settings.maxConcurrentStreams
                case .ready, .draining: sum
                }
            }
        }

        private func leastLoadedConnectionWithRoom() -> ConnectionID? {
            // Ids ascend through the table, so the first of equally loaded connections is the oldest.
            var best: ConnectionID?
            var bestLoad = Int.max
            for connection in connections.all where connection.hasRoom && connection.active < bestLoad {
                best = connection.id
                bestLoad = connection.active
            }
            return best
        }

        private mutating func activate(_ id: RequestID, on connectionID: ConnectionID) {
            connections.update(connectionID) { connection in
                connection.active += 1
                connection.idleSince = nil
            }
        }

        /// Takes a stream off its connection; a draining connection that is now empty closes.
        private mutating func streamRemoved(
            _ id: RequestID,
            from connectionID: ConnectionID,
            now: Moment
        ) -> [Action] {
            // The caller found the request active on this connection.
            let state = connections.update(connectionID) { connection -> Connection.State? in
                connection.active -= 1
                guard connection.active == 0 else { return nil }
                connection.idleSince = now
                return connection.state
            }
            guard state == .draining else { return [] }
            _ = connections.remove(connectionID)
            return [.closeConnection(connectionID, graceful: true)]
        }

        private mutating func drainConnection(_ id: ConnectionID, now: Moment) -> [Action] {
            guard var connection = connections[id] else { return [] }
            if case .connecting = connection.state { return [] }
            connection.state = .draining
            if connection.active == 0 {
                _ = connections.remove(id)
                return [.closeConnection(id, graceful: true)]
            }
            connections[id] = connection
            return []
        }

        /// A connect failed: back off, and fail the waiting requests when no connection is left to take them.
        private mutating func connectFailed(_ error: HTTP2Error, now: Moment) -> [Action] {
            connectFailures += 1
            lastConnectError = error
            reconnectAt =
                now
                + Self.backoff(
                    failures: connectFailures, base: settings.reconnectBackoff, limit: settings.reconnectBackoffLimit)
            guard !connections.all.contains(where: { $0.state != .draining }) else { return [] }
            var actions: [Action] = []
            while let id = queue.popFront() {
                requests[id] = nil
                actions.append(.failRequest(id, error))
            }
            return actions
        }

        /// While the last connect failed, no connection is usable and the back-off has not passed, new requests fail
        /// at once with that failure rather than wait for a connection that is not being made.
        private func connectFailureRefusal(now: Moment) -> HTTP2Error? {
            guard let reconnectAt, now < reconnectAt, let lastConnectError,
                !connections.all.contains(where: { $0.state != .draining })
            else { return nil }
            return lastConnectError
        }

        /// Exponential back-off after `failures` failed connects: `base`, doubled per further failure, at most `limit`.
        package static func backoff(failures: Int, base: Duration, limit: Duration) -> Duration {
            guard failures > 0 else { return .zero }
            var delay = base
            for _ in 1..<min(failures, 32) {
                delay *= 2
                if delay >= limit { return limit }
            }
            return min(delay, limit)
        }

        /// Adds a request's deadline, and drops the entries of finished requests once they outnumber the live ones:
        /// without a due deadline ``tick(now:)`` never runs, and the heap would grow by one entry per request.
        private mutating func pushDeadline(_ deadline: Moment, _ id: RequestID) {
            deadlines.push(deadline, id)
            deadlines.compact(liveCount: requests.count) { requests[$0] != nil }
        }

        /// Entries in the deadline heap, live or finished (for tests of its bound).
        var deadlineEntries: Int { deadlines.count }

        /// Entries in the queue's storage, waiting or removed (for tests of its bound).
        var queueEntries: Int { queue.storageCount }

        private mutating func forget(_ id: RequestID) {
            if let request = requests.removeValue(forKey: id), request.state == .queued {
                queue.remove(id)
            }
        }

        private mutating func closeIfDrained() -> [Action] {
            guard case .draining = phase, requests.isEmpty else { return [] }
            phase = .closed
            var actions: [Action] = connections.ids.map { .closeConnection($0, graceful: true) }
            connections.removeAll()
            actions.append(.close)
            return actions
        }
    }
}

/// A pool's connections in the order they were opened, so by ascending id: a handful, which a linear search finds
/// faster than a hash.
struct ConnectionTable: Sendable {
    private(set) var all: [HTTP2Pool.StateMachine.Connection] = []

    var count: Int { all.count }
    var ids: [HTTP2Pool.ConnectionID] { all.map(\.id) }

    subscript(id: HTTP2Pool.ConnectionID) -> HTTP2Pool.StateMachine.Connection? {
        get { all.firstIndex { $0.id == id }.map { all[$0] } }
        set {
            guard let index = all.firstIndex(where: { $0.id == id }) else { return }
            if let newValue { all[index] = newValue } else { all.remove(at: index) }
        }
    }

    /// Changes the connection in place and returns what `change` returns, or `nil` when there is no such connection.
    @discardableResult
    mutating func update<Result>(
        _ id: HTTP2Pool.ConnectionID,
        _ change: (inout HTTP2Pool.StateMachine.Connection) -> Result?
    ) -> Result? {
        guard let index = all.firstIndex(where: { $0.id == id }) else { return nil }
        return change(&all[index])
    }

    mutating func append(_ connection: HTTP2Pool.StateMachine.Connection) {
        all.append(connection)
    }

    mutating func remove(_ id: HTTP2Pool.ConnectionID) -> HTTP2Pool.StateMachine.Connection? {
        all.firstIndex { $0.id == id }.map { all.remove(at: $0) }
    }

    mutating func removeAll() {
        all.removeAll()
    }
}

/// Waiting requests in arrival order; requests found not processed go back to the front. Removal from the middle is
/// lazy: a removed id is skipped when reached.
struct RequestQueue: Sendable {
    private var storage: [HTTP2Pool.RequestID] = []
    private var head = 0
    private var removed: Set<HTTP2Pool.RequestID> = []

    private(set) var count = 0

    mutating func pushBack(_ id: HTTP2Pool.RequestID) {
        storage.append(id)
        count += 1
    }

    mutating func pushFront(_ id: HTTP2Pool.RequestID) {
        if head > 0 {
            head -= 1
            storage[head] = id
        } else {
            storage.insert(id, at: 0)
        }
        count += 1
    }

    mutating func popFront() -> HTTP2Pool.RequestID? {
        while head < storage.count {
            let id = storage[head]
            head += 1
            if removed.remove(id) != nil { continue }
            count -= 1
            compact()
            return id
        }
        return nil
    }

    /// Entries held, waiting or removed-but-not-yet-skipped (for tests of its bound).
    var storageCount: Int { storage.count }

    /// Removes a queued id (the caller knows it is queued).
    ///
    /// The id stays in the storage, marked, until it is reached; but when nothing is reached (a settled connection
    /// whose server allows 0 streams, for as long as it likes) cancelled and timed-out requests would pile up there.
    /// So once the marked entries outnumber the waiting ones (and 64), they are dropped in one pass: amortised O(1)
    /// per removal, and storage bounded by about twice the waiting requests.
    mutating func remove(_ id: HTTP2Pool.RequestID) {
        removed.insert(id)
        count -= 1
        if count == 0 {
            removeAll()
        } else if removed.count > 64 && removed.count > count {
            dropRemoved()
        }
    }

    private mutating func dropRemoved() {
        storage.removeFirst(head)
        head = 0
        storage.removeAll { removed.contains($0) }
        removed.removeAll()
    }

    mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        removed.removeAll()
        head = 0
        count = 0
    }

    /// Drops taken entries once they are half the storage, keeping memory bounded by the waiting requests.
    private mutating func compact() {
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            removed.removeAll()
            head = 0
        } else if head > 64 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}

/// A binary min-heap of request deadlines. Entries of finished requests stay until they surface or until
/// ``compact(liveCount:keeping:)`` rebuilds the heap from the live ones, once those are fewer than half.
struct DeadlineHeap: Sendable {
    struct Entry: Sendable {
        var deadline: Moment
        var id: HTTP2Pool.RequestID
    }
    private var entries: [Entry] = []

    var peek: Entry? { entries.first }
    var count: Int { entries.count }

    mutating func push(_ deadline: Moment, _ id: HTTP2Pool.RequestID) {
        entries.append(Entry(deadline: deadline, id: id))
        siftUp(entries.count - 1)
    }

    mutating func pop() {
        guard !entries.isEmpty else { return }
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        if !entries.isEmpty { siftDown(0) }
    }

    mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
    }

    /// Rebuilds the heap from the entries `isLive` keeps once more than half of them (and over 1,024) are stale,
    /// given `liveCount` live ones: amortised O(1) per push, and memory bounded by about twice the live requests.
    mutating func compact(liveCount: Int, keeping isLive: (HTTP2Pool.RequestID) -> Bool) {
        guard entries.count > 2 * liveCount + 1024 else { return }
        entries.removeAll { !isLive($0.id) }
        guard entries.count > 1 else { return }
        for index in stride(from: entries.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            var smallest = left
            let right = left + 1
            if right < entries.count && entries[right].deadline < entries[left].deadline { smallest = right }
            guard entries[smallest].deadline < entries[parent].deadline else { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// An instant as the pool's state machine keeps it: nanoseconds from the machine's epoch.
///
/// `ContinuousClock.Instant` is resilient (its layout is hidden from this module), so every copy, comparison and
/// addition of one is a call through its value witnesses, and every table holding one (requests, deadlines,
/// connections) moves its entries through them. The machine converts the instants it is given once, at its entry
/// points, and keeps plain integers (`relay-bench transport`: the deadline heap and the request table were a few per
/// cent of the event loop's time in those calls).
struct Moment: Comparable, Hashable, Sendable {
    var nanoseconds: Int64

    static func < (lhs: Moment, rhs: Moment) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    static func + (moment: Moment, duration: Duration) -> Moment {
        let span = nanoseconds(duration)
        let (sum, overflow) = moment.nanoseconds.addingReportingOverflow(span)
        return Moment(nanoseconds: overflow ? (span < 0 ? .min : .max) : sum)
    }

    /// A duration in whole nanoseconds, saturating at the limits of `Int64` (about 292 years).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.wholeUnits(perSecond: 1_000_000_000)
    }
}
