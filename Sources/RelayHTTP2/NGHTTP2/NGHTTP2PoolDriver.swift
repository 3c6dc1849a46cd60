import CNGHTTP2
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Runs one pool's ``HTTP2Pool/StateMachine`` on an event loop: takes the callers' events and the connections'
/// reports, feeds them to the machine and carries out its actions. Confined to the loop's thread.
///
/// Exclusivity: the properties marked `@exclusivity(unchecked)` skip the runtime's exclusive-access checks, which
/// `relay-bench transport` measured at about 3–4 % of the event loop's time. They are safe because the driver is
/// confined to its loop's thread (its `Sendable` conformance is unavailable) and no access to one of them is in
/// progress while code that could touch the same property runs: the state machine's methods are pure; resuming a
/// completion only enqueues a task (or records a batch member's result under the batch's own lock); an event lent to
/// `handle` (`events[index]`) is the only access to `events` in the meantime. The compiler still checks every static
/// exclusivity rule.
final class NGHTTP2PoolDriver {
    let shared: HTTP2Pool.Shared
    private let configuration: HTTP2PoolConfiguration
    private let tls: TLSClientContext
    private let logger: Logger
    private unowned let loop: NGHTTP2LoopThread
    @exclusivity(unchecked) private var machine: HTTP2Pool.StateMachine
    private var origin: UpstreamOrigin?
    /// The bytes before the path of the first request's URL: later URLs that start with them are split without
    /// being parsed again (every request of a pool goes to one origin).
    private var originPrefix: [UInt8] = []
    /// Callers to resume at the end of the loop turn, after the counters are published once for all of them.
    @exclusivity(unchecked) private var completions: [(HTTP2Pool.Completion, Result<HTTP2Response, any Error>)] = []
    private var dns = DNSCache()
    /// Every request from submission until its caller is resumed, with its stream state.
    @exclusivity(unchecked) private var pending: [HTTP2Pool.RequestID: NGHTTP2Stream] = [:]
    /// The inbox's events of this turn (swapped with the inbox's buffer, see ``HTTP2Pool/Shared/exchange(into:)``).
    @exclusivity(unchecked) private var events: [HTTP2Pool.Event] = []
    @exclusivity(unchecked) private var connections: [HTTP2Pool.ConnectionID: NGHTTP2Connection] = [:]
    /// Connections with something to send before the loop sleeps.
    @exclusivity(unchecked) private var dirty: Set<HTTP2Pool.ConnectionID> = []
    @exclusivity(unchecked) private var statistics = HTTP2PoolStatistics()
    private var statisticsChanged = true
    private(set) var isClosed = false
    /// The last instant converted for the machine, and its moment (see ``moment(of:)``). Two plain properties, not
    /// an optional tuple: `ContinuousClock.Instant` is resilient, and an optional tuple holding one is copied and
    /// tested through value witnesses on every read (`moment(of:)` was 1.5 % of the process's CPU in `relay-bench
    /// transport`).
    @exclusivity(unchecked) private var convertedInstant: ContinuousClock.Instant
    @exclusivity(unchecked) private var convertedMoment: Moment
    @exclusivity(unchecked) private var lastTimeout: (duration: Duration, nanoseconds: Int64)?

    init(
        shared: HTTP2Pool.Shared,
        configuration: HTTP2PoolConfiguration,
        tls: TLSClientContext,
        logger: Logger,
        loop: NGHTTP2LoopThread
    ) {
        self.shared = shared
        self.configuration = configuration
        self.tls = tls
        self.logger = logger
        self.loop = loop
        let machine = HTTP2Pool.StateMachine(settings: .init(nghttp2: configuration))
        self.machine = machine
        let start = loop.now
        self.convertedInstant = start
        self.convertedMoment = machine.moment(start)
    }

    var nextDeadline: ContinuousClock.Instant? { isClosed ? nil : machine.nextDeadline }

    /// Connections still have something to send (a turn stopped after 64 rounds of flushing): the loop must not sleep.
    var hasPendingWrites: Bool { !isClosed && !dirty.isEmpty }

    // MARK: - Callers' events

    /// Takes every event the callers left in the inbox.
    func takeEvents(now: ContinuousClock.Instant) {
        shared.exchange(into: &events)
        // Each event is moved out of the array, a payload-free event swapped into its place: lending
        // `events[index]` to `handle` still copied it, retaining the buffers of a request that its stream then
        // retained again, all released later (about 2 % of the process in `relay-bench transport`). A large batch
        // goes out in writes of `submissionsPerWrite` requests, so the server starts on the first while the rest are
        // prepared.
        for index in events.indices {
            var event = HTTP2Pool.Event.cancel(0)
            swap(&event, &events[index])
            guard !isClosed else {
                // The pool closed within this batch (a shutdown with nothing left to finish): what came after fails
                // as a submission after the owner's exit does, and no caller is left waiting.
                if case .submit(_, _, _, let completion) = event {
                    completion.resume(throwing: HTTP2Error(.shuttingDown, detail: "the pool is shut down"))
                }
                continue
            }
            handle(consume event, now: now)
            if (index + 1) % Self.submissionsPerWrite == 0 { flushDirty(now: now) }
        }
        events.removeAll(keepingCapacity: true)
    }

    /// Requests submitted between two writes of a connection when a burst arrives at once (2,000 callers starting
    /// together): one write per 256 requests rather than one for all, so that sending, the server's work and the
    /// answers overlap (relay-bench transport: the first 2,000 requests took about twice as long as h2load's).
    private static let submissionsPerWrite = 256

    private func handle(_ event: consuming HTTP2Pool.Event, now: ContinuousClock.Instant) {
        switch consume event {
        case .submit(let id, let request, let timeout, let completion):
            guard let path = path(of: request.url) else {
                statistics.failed[.invalidRequest, default: 0] += 1
                completions.append(
                    (
                        completion,
                        .failure(HTTP2Error(.invalidRequest, detail: "not an https URL of the pool's origin"))
                    ))
                return
            }
            let at = moment(of: now)
            let freshConnection = request.freshConnection
            // The stream takes the request over (its last use here), rather than retaining its buffers again.
            pending[id] = NGHTTP2Stream(
                requestID: id, request: consume request, path: path, completion: completion, submitted: at)
            let (sum, overflow) = at.nanoseconds.addingReportingOverflow(nanoseconds(of: timeout))
            let deadline = Moment(nanoseconds: overflow ? .max : sum)  // a timeout of centuries never passes
            perform(
                machine.requestSubmitted(id, deadline: deadline, freshConnection: freshConnection, at: at),
                now: now)
        case .cancel(let id):
            perform(machine.requestCancelled(id, now: now), now: now)
        case .shutdown(let deadline):
            perform(machine.shutdownRequested(deadline: deadline, now: now), now: now)
        case .resolved(let id, let result):
            guard let connection = connections[id] else { return }
            switch result {
            case .success(let addresses):
                dns.store(addresses, until: now + configuration.dnsCacheTimeout)
                if let address = dns.address(now: now) { open(connection, at: address) }
            case .failure(let error):
                connection.resolutionFailed(error)
                process(connection, now: now)
            }
        }
    }

    /// The path of a request's URL, or `nil` when the URL is not an `https` URL of the pool's origin. The first URL
    /// fixes the origin.
    private func path(of url: String) -> String? {
        let bytes = url.utf8
        if !originPrefix.isEmpty, let path = bytes.withContiguousStorageIfAvailable({ samePrefixPath($0) }), let path {
            return path
        }
        guard let (requestOrigin, path) = UpstreamOrigin.split(url) else { return nil }
        if origin == nil {
            origin = requestOrigin
            if let pathStart = bytes.firstIndex(
                where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }, after: "https://".utf8.count)
            {
                originPrefix = Array(bytes[..<pathStart])
            }
        }
        return requestOrigin == origin ? path : nil
    }

    /// The path of a URL that starts with the origin's prefix (compared as bytes), or `nil`.
    private func samePrefixPath(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let count = originPrefix.count
        guard bytes.count > count, let base = bytes.baseAddress,
            originPrefix.withUnsafeBufferPointer({ prefix in
                prefix.baseAddress.map { memcmp($0, base, count) == 0 } ?? false
            })
        else { return nil }
        let first = bytes[count]
        guard first == UInt8(ascii: "/") || first == UInt8(ascii: "?") else { return nil }
        let rest = String(decoding: UnsafeBufferPointer(rebasing: bytes[count...]), as: UTF8.self)
        return first == UInt8(ascii: "/") ? rest : "/" + rest
    }

    /// The loop turn's instant as the state machine keeps it, converted once per turn (a conversion divides a
    /// 128-bit duration; the hot events take the result).
    private func moment(of now: ContinuousClock.Instant) -> Moment {
        if now == convertedInstant { return convertedMoment }
        let converted = machine.moment(now)
        convertedInstant = now
        convertedMoment = converted
        return converted
    }

    /// A request's timeout in nanoseconds; callers of one pool mostly use one timeout, so the last is kept.
    private func nanoseconds(of timeout: Duration) -> Int64 {
        if let last = lastTimeout, last.duration == timeout { return last.nanoseconds }
        let converted = Moment.nanoseconds(timeout)
        lastTimeout = (timeout, converted)
        return converted
    }

    // MARK: - Actions

    private func perform(_ actions: [HTTP2Pool.StateMachine.Action], now: ContinuousClock.Instant) {
        for action in actions {
            switch action {
            case .openConnection(let id):
                openConnection(id, now: now)
            case .startStream(let id, let connectionID):
                startStream(id, on: connectionID, now: now)
            case .finishRequest(let id):
                guard let stream = pending.removeValue(forKey: id), !stream.answered else { continue }
                answer(stream, now: now)
            case .failRequest(let id, let error):
                guard let stream = pending.removeValue(forKey: id), !stream.answered else { continue }
                statistics.failed[error.kind, default: 0] += 1
                resume(id, stream, with: .failure(error))
            case .cancelStream(let id, let connectionID, let error):
                guard let stream = pending.removeValue(forKey: id) else { continue }
                if let connection = connections[connectionID], stream.streamID > 0 {
                    connection.cancel(streamID: stream.streamID)
                    dirty.insert(connectionID)
                }
                // An answered request whose body the server stopped taking: the stream goes, the answer stands.
                guard !stream.answered else { continue }
                statistics.failed[error.kind, default: 0] += 1
                resume(id, stream, with: .failure(error))
            case .sendPing(let id):
                guard let connection = connections[id] else { continue }
                connection.ping()
                statistics.pingsSent += 1
                dirty.insert(id)
            case .closeConnection(let id, let graceful):
                guard let connection = forget(id) else { continue }
                if connection.pingOutstanding && !graceful { statistics.pingTimeouts += 1 }
                connection.close(graceful: graceful)
            case .close:
                closeNow()
            }
        }
        statisticsChanged = true
    }

    /// Resumes the caller with the stream's whole response.
    private func answer(_ stream: NGHTTP2Stream, now: ContinuousClock.Instant) {
        let started = stream.started ?? stream.submitted
        let finished = moment(of: now)
        let response = HTTP2Response(
            status: stream.status,
            fields: stream.headers,
            body: stream.responseBody,
            timings: .init(
                queued: .nanoseconds(started.nanoseconds - stream.submitted.nanoseconds),
                transfer: .nanoseconds(finished.nanoseconds - started.nanoseconds),
                openedConnection: stream.openedConnection
            )
        )
        statistics.completed += 1
        resume(stream.requestID, stream, with: .success(response))
    }

    private func resume(
        _ id: HTTP2Pool.RequestID, _ stream: NGHTTP2Stream, with result: Result<HTTP2Response, HTTP2Error>
    ) {
        completions.append((stream.completion, result.mapError { $0 as any Error }))
    }

    /// Publishes the counters, then resumes the callers finished in this turn: a caller that reads the counters
    /// after its answer sees its own request counted, and the counters are published once per turn, not per request.
    func deliverCompletions() {
        if statisticsChanged || !completions.isEmpty { publishStatistics() }
        guard !completions.isEmpty else { return }
        // Resuming only enqueues the callers' tasks elsewhere; nothing re-enters the driver meanwhile. Each result is
        // moved out of the list (the order of resumption does not matter), not copied and released twice.
        while let (completion, result) = completions.popLast() { completion.resume(with: result) }
    }

    private func openConnection(_ id: HTTP2Pool.ConnectionID, now: ContinuousClock.Instant) {
        guard let origin, !isClosed else { return }
        let connection = loop.makeConnection(
            id: id, origin: origin, tls: tls, maxResponseBytes: configuration.maxResponseBytes, driver: self)
        connections[id] = connection
        if let address = SocketAddressBytes.literal(origin.host, port: origin.port) ?? dns.address(now: now) {
            open(connection, at: address)
            return
        }
        // getaddrinfo blocks: it runs off the loop and its answer comes back through the inbox.
        let shared = self.shared
        Resolver.resolve(origin.host, port: origin.port) { result in shared.post(.resolved(id, result)) }
    }

    private func open(_ connection: NGHTTP2Connection, at address: SocketAddressBytes) {
        connection.connect(to: address)
        if connection.phase != .closed { statistics.connectionsOpened += 1 }
        process(connection, now: loop.now)
    }

    private func startStream(
        _ id: HTTP2Pool.RequestID, on connectionID: HTTP2Pool.ConnectionID, now: ContinuousClock.Instant
    ) {
        guard let stream = pending[id] else { return }
        guard !stream.answered else {
            // Never sent twice once answered (the machine resends only streams the server did not process).
            perform(machine.streamEnded(id, .answered, now: now), now: now)
            return
        }
        guard let connection = connections[connectionID], connection.phase == .open else {
            // The connection failed and its report waits its turn (a response and the connection's end read
            // together): the request never left. The machine stops choosing that connection first, so the request
            // goes elsewhere once, rather than bouncing off it until its resends run out.
            if connections[connectionID] != nil {
                perform(machine.connectionExhausted(connectionID, now: now), now: now)
            }
            perform(machine.streamEnded(id, .notProcessed, now: now), now: now)
            return
        }
        stream.prepareForSubmission()
        stream.started = moment(of: now)
        switch connection.submit(stream) {
        case .success:
            stream.openedConnection = connection.streamsStarted == 1
            dirty.insert(connectionID)
        case .failure(let error) where error.kind == .protocolError:
            // Stream ids used up: this connection takes no more, and the request goes elsewhere, not an attempt.
            perform(machine.connectionExhausted(connectionID, now: now), now: now)
            perform(machine.streamEnded(id, .notProcessed, now: now), now: now)
        case .failure(let error):
            perform(machine.streamEnded(id, .failed(error), now: now), now: now)
        }
    }

    // MARK: - Connections' reports

    /// Feeds what a connection reported to the machine.
    func process(_ connection: NGHTTP2Connection, now: ContinuousClock.Instant) {
        let id = connection.id
        if connection.takeReceivedFrames() {
            machine.framesReceived(id, now: now)
            // What arrived may want an answer (SETTINGS and PING acknowledgements, WINDOW_UPDATE).
            dirty.insert(id)
        }
        for report in connection.takeReports() {
            switch report {
            case .established:
                dirty.insert(id)
                perform(machine.connectionEstablished(id, now: now), now: now)
            case .settings(let limit):
                perform(machine.settingsReceived(id, maxConcurrentStreams: limit, now: now), now: now)
            case .goAway(let lastStreamID, let errorCode, let debugData):
                statistics.goAwaysReceived += 1
                logger.notice(
                    "Upstream sent GOAWAY",
                    metadata: [
                        "http2.origin": "\(connection.origin.host):\(connection.origin.port)",
                        "http2.goaway.last_stream_id": "\(lastStreamID)",
                        "http2.goaway.error": "\(String(cString: nghttp2_http2_strerror(errorCode)))",
                        "http2.goaway.debug": "\(debugData)",
                    ]
                )
                perform(machine.goAwayReceived(id, now: now), now: now)
            case .pingAcknowledged:
                machine.pingAcknowledged(id, now: now)
            case .responseEnded(let stream):
                // The caller is answered at once; the machine keeps counting the stream against the connection's
                // limit until it closes or the request's deadline resets it, as nghttp2 does.
                guard pending[stream.requestID] === stream, !stream.answered else { continue }
                stream.answered = true
                answer(stream, now: now)
            case .responseTooLarge(let stream):
                guard pending[stream.requestID] === stream else { continue }
                perform(
                    machine.responseTooLarge(
                        stream.requestID, limit: configuration.maxResponseBytes, at: moment(of: now)),
                    now: now)
            case .streamClosed(let stream, let end):
                if end == .notProcessed { statistics.streamsResent += 1 }
                perform(machine.streamEnded(stream.requestID, end, at: moment(of: now)), now: now)
            case .failed(let error):
                guard forget(id) != nil else { continue }
                perform(machine.connectionClosed(id, error: error, now: now), now: now)
            }
        }
        statisticsChanged = true
    }

    /// Takes a connection out of the pool and the loop, its resets counted; `nil` when it was already gone.
    private func forget(_ id: HTTP2Pool.ConnectionID) -> NGHTTP2Connection? {
        guard let connection = connections.removeValue(forKey: id) else { return nil }
        countResets(of: connection)
        dirty.remove(id)
        loop.forget(connection)
        return connection
    }

    private func countResets(of connection: NGHTTP2Connection) {
        statistics.resetsSent += connection.resetsSubmitted
        connection.resetsCounted()
    }

    // MARK: - Each loop turn

    /// Runs the machine's timers when due, then sends what the connections have to send. Sending can close streams
    /// (a request whose response had already arrived), which can start others: it repeats until nothing is left.
    func advance(now: ContinuousClock.Instant) {
        guard !isClosed else {
            deliverCompletions()
            return
        }
        if let deadline = machine.nextDeadline, deadline <= now {
            perform(machine.tick(now: now), now: now)
        }
        flushDirty(now: now)
        deliverCompletions()
    }

    /// Sends what the connections have to send. Sending can close streams (a request whose response had already
    /// arrived), which can start others: it repeats until nothing is left.
    private func flushDirty(now: ContinuousClock.Instant) {
        // Streams about to go on the wire are counted before they leave: whoever sees a request arrive upstream
        // sees it in flight here.
        if statisticsChanged { publishStatistics() }
        var rounds = 0
        while !dirty.isEmpty && !isClosed && rounds < 64 {
            rounds += 1
            let flushing = dirty
            dirty.removeAll(keepingCapacity: true)
            for id in flushing.sorted() {
                guard let connection = connections[id] else { continue }
                connection.flush()
                process(connection, now: now)
            }
        }
    }

    private func publishStatistics() {
        for connection in connections.values { countResets(of: connection) }
        statistics.connectionsOpen = connections.values.count { $0.phase == .open }
        statistics.streamsInFlight = machine.inFlightCount
        statistics.queued = machine.queuedCount
        shared.publish(statistics)
        statisticsChanged = false
    }

    /// Fails what is left, closes every connection and leaves the loop.
    private func closeNow() {
        guard !isClosed else { return }
        isClosed = true
        let late = HTTP2Error(.shuttingDown, detail: "the pool is shut down")
        for (id, stream) in pending.sorted(by: { $0.key < $1.key }) {
            statistics.failed[late.kind, default: 0] += 1
            resume(id, stream, with: .failure(late))
        }
        pending.removeAll()
        for connection in connections.values {
            countResets(of: connection)
            connection.close(graceful: true)
            loop.forget(connection)
        }
        connections.removeAll()
        // Published whether or not anything else changed in this turn: `shutdown()` returns with no connection
        // counted open, and nothing later changes the counters of a closed pool.
        statisticsChanged = true
        deliverCompletions()
        let (lateEvents, waiters) = shared.ownerExiting()
        for event in lateEvents {
            if case .submit(_, _, _, let completion) = event { completion.resume(throwing: late) }
        }
        for waiter in waiters { waiter.resume() }
    }
}

@available(*, unavailable)
extension NGHTTP2PoolDriver: Sendable {}
