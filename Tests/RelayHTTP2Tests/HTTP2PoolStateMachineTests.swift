import Testing

@testable import RelayHTTP2

/// The pool's decisions, fed scripted events with explicit instants: no sockets, no clock.
@Suite struct HTTP2PoolStateMachineTests {
    typealias Machine = HTTP2Pool.StateMachine
    let t0 = ContinuousClock.now
    var later: ContinuousClock.Instant { t0 + .seconds(30) }

    func machine(
        maxConnections: Int = 2,
        maxConcurrentStreams: Int = 100,
        maxQueued: Int = 1_000,
        pingInterval: Duration? = nil,
        maxIdle: Duration? = nil,
        maxAge: Duration? = nil
    ) -> Machine {
        Machine(
            settings: .init(
                maxConnections: maxConnections,
                maxConcurrentStreams: maxConcurrentStreams,
                maxQueued: maxQueued,
                connectTimeout: .seconds(5),
                maxIdle: maxIdle,
                maxAge: maxAge,
                pingInterval: pingInterval,
                pingTimeout: .seconds(2),
                reconnectBackoff: .milliseconds(100),
                reconnectBackoffLimit: .seconds(1)
            )
        )
    }

    /// A machine with one connection (id 1) up and SETTINGS received.
    func ready(
        limit: Int? = 100, maxConnections: Int = 2, maxConcurrentStreams: Int = 100, pingInterval: Duration? = nil
    ) -> Machine {
        var pool = machine(
            maxConnections: maxConnections, maxConcurrentStreams: maxConcurrentStreams, pingInterval: pingInterval)
        #expect(pool.requestSubmitted(1, deadline: later, now: t0) == [.openConnection(1)])
        #expect(pool.connectionEstablished(1, now: t0) == [])
        #expect(pool.settingsReceived(1, maxConcurrentStreams: limit, now: t0) == [.startStream(1, 1)])
        #expect(pool.streamEnded(1, .answered, now: t0) == [.finishRequest(1)])
        return pool
    }

    @Test func waitsForTheServersSettingsBeforeOpeningStreams() {
        var pool = machine()
        #expect(pool.requestSubmitted(1, deadline: later, now: t0) == [.openConnection(1)])
        #expect(pool.requestSubmitted(2, deadline: later, now: t0) == [], "one connection being opened covers 100")
        #expect(pool.connectionEstablished(1, now: t0) == [], "no stream before SETTINGS")
        // An APNs-like limit of 1: the connection is full with one stream, so a second one opens for the waiting
        // request.
        #expect(pool.settingsReceived(1, maxConcurrentStreams: 1, now: t0) == [.startStream(1, 1), .openConnection(2)])
        #expect(pool.queuedCount == 1)
        // APNs raises the limit after the first success.
        #expect(pool.streamEnded(1, .answered, now: t0) == [.finishRequest(1), .startStream(2, 1)])
    }

    @Test func theServersLimitAndOursBothCap() {
        var pool = ready(limit: 3, maxConcurrentStreams: 100)
        var started: [Machine.Action] = []
        for id in 2...6 as ClosedRange<UInt64> { started += pool.requestSubmitted(id, deadline: later, now: t0) }
        // Three fit; two wait, and a second connection is opened for them.
        #expect(started.filter { if case .startStream = $0 { true } else { false } }.count == 3)
        #expect(started.contains(.openConnection(2)))
        var capped = ready(limit: nil, maxConnections: 1, maxConcurrentStreams: 2)
        #expect(capped.requestSubmitted(2, deadline: later, now: t0) == [.startStream(2, 1)])
        #expect(capped.requestSubmitted(3, deadline: later, now: t0) == [.startStream(3, 1)])
        #expect(capped.requestSubmitted(4, deadline: later, now: t0) == [], "our own cap of 2, at the connection limit")
    }

    @Test func aLimitLoweredMidConnectionIsRespected() {
        var pool = ready(limit: 10, maxConnections: 1)
        for id in 2...5 as ClosedRange<UInt64> { _ = pool.requestSubmitted(id, deadline: later, now: t0) }
        #expect(pool.inFlightCount == 4)
        #expect(pool.settingsReceived(1, maxConcurrentStreams: 2, now: t0) == [])
        #expect(pool.requestSubmitted(6, deadline: later, now: t0) == [])
        #expect(pool.streamEnded(2, .answered, now: t0) == [.finishRequest(2)], "3 in flight is still above 2")
        #expect(pool.streamEnded(3, .answered, now: t0) == [.finishRequest(3)])
        #expect(pool.streamEnded(4, .answered, now: t0) == [.finishRequest(4), .startStream(6, 1)])
    }

    @Test func theLeastLoadedConnectionTakesTheNextStream() {
        var pool = machine(maxConnections: 2, maxConcurrentStreams: 2)
        #expect(pool.requestSubmitted(1, deadline: later, now: t0) == [.openConnection(1)])
        #expect(pool.requestSubmitted(2, deadline: later, now: t0) == [])
        #expect(
            pool.requestSubmitted(3, deadline: later, now: t0) == [.openConnection(2)], "3 waiting > 2 being opened")
        _ = pool.connectionEstablished(1, now: t0)
        _ = pool.connectionEstablished(2, now: t0)
        #expect(
            pool.settingsReceived(1, maxConcurrentStreams: 100, now: t0) == [.startStream(1, 1), .startStream(2, 1)])
        #expect(pool.settingsReceived(2, maxConcurrentStreams: 100, now: t0) == [.startStream(3, 2)])
        #expect(
            pool.requestSubmitted(4, deadline: later, now: t0) == [.startStream(4, 2)],
            "connection 2 had one stream, 1 had two")
        #expect(pool.requestSubmitted(5, deadline: later, now: t0) == [], "both full: queued")
        #expect(pool.streamEnded(1, .answered, now: t0) == [.finishRequest(1), .startStream(5, 1)])
    }

    @Test func aRefusedStreamIsResentFirstWithoutFailing() {
        var pool = ready(limit: 1, maxConnections: 1)
        #expect(pool.requestSubmitted(2, deadline: later, now: t0) == [.startStream(2, 1)])
        #expect(pool.requestSubmitted(3, deadline: later, now: t0) == [])
        // REFUSED_STREAM: request 2 goes back to the front, ahead of 3.
        #expect(pool.streamEnded(2, .notProcessed, now: t0) == [.startStream(2, 1)])
        #expect(pool.streamEnded(2, .answered, now: t0) == [.finishRequest(2), .startStream(3, 1)])
    }

    @Test func aRequestRefusedTooOftenFails() {
        var pool = ready(limit: 1, maxConnections: 1)
        _ = pool.requestSubmitted(2, deadline: later, now: t0)
        for _ in 0..<5 { #expect(pool.streamEnded(2, .notProcessed, now: t0) == [.startStream(2, 1)]) }
        let last = pool.streamEnded(2, .notProcessed, now: t0)
        guard case .failRequest(2, let error) = last.first else {
            Issue.record("expected a failure, got \(last)")
            return
        }
        #expect(error.kind == .streamReset)
    }

    @Test func goAwayDrainsTheConnectionAndResendsWhatWasNotProcessed() {
        var pool = ready(limit: 100, maxConnections: 1)
        for id in 2...4 as ClosedRange<UInt64> { _ = pool.requestSubmitted(id, deadline: later, now: t0) }
        // GOAWAY with last stream = request 2's: 3 and 4 were not processed. The draining connection does not count
        // against the cap, so a replacement opens for them.
        #expect(pool.goAwayReceived(1, now: t0) == [])
        #expect(pool.streamEnded(3, .notProcessed, now: t0) == [.openConnection(2)])
        #expect(pool.streamEnded(4, .notProcessed, now: t0) == [])
        #expect(pool.requestSubmitted(5, deadline: later, now: t0) == [], "nothing new on a draining connection")
        #expect(pool.streamEnded(2, .answered, now: t0) == [.finishRequest(2), .closeConnection(1, graceful: true)])
        _ = pool.connectionEstablished(2, now: t0)
        #expect(
            pool.settingsReceived(2, maxConcurrentStreams: 100, now: t0) == [
                .startStream(4, 2), .startStream(3, 2), .startStream(5, 2),
            ])
    }

    @Test func aFreshConnectionRequestRetiresTheConnectionsOpenedBeforeIt() {
        var pool = ready(limit: 100, maxConnections: 1)
        #expect(pool.requestSubmitted(2, deadline: later, now: t0) == [.startStream(2, 1)])
        let t1 = t0 + .milliseconds(10)
        // Connection 1 (opened at t0) stops taking streams but keeps request 2; a new connection opens for request 3.
        #expect(pool.requestSubmitted(3, deadline: later, freshConnection: true, now: t1) == [.openConnection(2)])
        #expect(pool.requestSubmitted(4, deadline: later, now: t1) == [], "nothing new on the retired connection")
        #expect(pool.streamEnded(2, .answered, now: t1) == [.finishRequest(2), .closeConnection(1, graceful: true)])
        _ = pool.connectionEstablished(2, now: t1)
        #expect(
            pool.settingsReceived(2, maxConcurrentStreams: 100, now: t1) == [.startStream(3, 2), .startStream(4, 2)])
        // Another such request at the same instant keeps the connection opened then; so does one within the
        // interval between retirements; after it, an idle one closes at once.
        #expect(pool.requestSubmitted(5, deadline: later, freshConnection: true, now: t1) == [.startStream(5, 2)])
        for id in 3...5 as ClosedRange<UInt64> { _ = pool.streamEnded(id, .answered, now: t1) }
        let t2 = t1 + .milliseconds(10)
        #expect(pool.requestSubmitted(6, deadline: later, freshConnection: true, now: t2) == [.startStream(6, 2)])
        _ = pool.streamEnded(6, .answered, now: t2)
        let t3 = t1 + Machine.Settings.defaultFreshConnectionInterval
        #expect(
            pool.requestSubmitted(7, deadline: t3 + .seconds(30), freshConnection: true, now: t3) == [
                .closeConnection(2, graceful: true), .openConnection(3),
            ])
    }

    /// A steady stream of requests asking for a fresh connection (every answer `UnrelatedKeyIdInToken`) retires
    /// connections at most once per `freshConnectionInterval`, not once per request (issue 16, risk 3).
    @Test func freshConnectionRetirementsAreRateLimited() {
        var pool = ready(limit: 100, maxConnections: 2)
        let interval = Machine.Settings.defaultFreshConnectionInterval
        var now = t0
        var opened: [ContinuousClock.Instant] = []
        var closed = 0
        // 600 such requests, one every 100 ms for a minute, each answered within its step.
        for id in 2...601 as ClosedRange<UInt64> {
            now += .milliseconds(100)
            var actions = pool.requestSubmitted(id, deadline: now + .seconds(30), freshConnection: true, now: now)
            for case .openConnection(let connection) in actions {
                opened.append(now)
                actions += pool.connectionEstablished(connection, now: now)
                actions += pool.settingsReceived(connection, maxConcurrentStreams: 100, now: now)
            }
            closed += actions.count { if case .closeConnection = $0 { true } else { false } }
            actions += pool.streamEnded(id, .answered, now: now)
            #expect(actions.contains(.finishRequest(id)), "request \(id) went out: \(actions)")
        }
        // Six retirements in a minute: at 100 ms, then every 10 s.
        #expect(opened.count == 6, "\(opened.count) connections opened")
        #expect(closed == 6)
        #expect(zip(opened, opened.dropFirst()).allSatisfy { $0.duration(to: $1) >= interval })

        // The curl backend, whose libcurl opens fresh connections itself, asks the machine the same question.
        var curl = machine()
        let instants = [t0, t0 + interval - .milliseconds(1), t0 + interval, t0 + interval]
        let granted = instants.map { curl.freshConnectionGranted(now: $0) }
        #expect(granted == [true, false, true, false])
    }

    @Test func aResetOrLostConnectionIsOutcomeUnknownNotResent() {
        var pool = ready(limit: 100, maxConnections: 1)
        _ = pool.requestSubmitted(2, deadline: later, now: t0)
        _ = pool.requestSubmitted(3, deadline: later, now: t0)
        let reset = HTTP2Error(.streamReset, detail: "INTERNAL_ERROR")
        #expect(pool.streamEnded(2, .failed(reset), now: t0) == [.failRequest(2, reset)])
        let lost = HTTP2Error(.connectionLost, detail: "gone")
        #expect(pool.connectionClosed(1, error: lost, now: t0) == [.failRequest(3, lost)])
        // The next request opens a new connection.
        #expect(pool.requestSubmitted(4, deadline: later, now: t0) == [.openConnection(2)])
    }

    @Test func connectFailuresBackOffAndFailTheWaitingRequests() {
        var pool = machine(maxConnections: 1)
        #expect(pool.requestSubmitted(1, deadline: later, now: t0) == [.openConnection(1)])
        _ = pool.requestSubmitted(2, deadline: later, now: t0)
        let refused = HTTP2Error(.connectFailed, detail: "ECONNREFUSED")
        #expect(
            pool.connectionClosed(1, error: refused, now: t0) == [.failRequest(1, refused), .failRequest(2, refused)])
        // During the back-off, a new request fails at once rather than wait for a connection nobody is opening.
        #expect(pool.requestSubmitted(3, deadline: later, now: t0 + .milliseconds(50)) == [.failRequest(3, refused)])
        #expect(pool.requestSubmitted(4, deadline: later, now: t0 + .milliseconds(100)) == [.openConnection(2)])
        #expect(pool.connectionClosed(2, error: refused, now: t0 + .milliseconds(100)) == [.failRequest(4, refused)])
        // The second failure doubles the wait.
        #expect(pool.requestSubmitted(5, deadline: later, now: t0 + .milliseconds(250)) == [.failRequest(5, refused)])
        #expect(pool.requestSubmitted(6, deadline: later, now: t0 + .milliseconds(300)) == [.openConnection(3)])
        _ = pool.connectionEstablished(3, now: t0 + .milliseconds(310))
        #expect(
            pool.settingsReceived(3, maxConcurrentStreams: 10, now: t0 + .milliseconds(310)) == [.startStream(6, 3)])
    }

    @Test(arguments: [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1000), (40, 1000)])
    func backoffDoublesUpToItsLimit(failures: Int, milliseconds: Int) {
        #expect(
            Machine.backoff(failures: failures, base: .milliseconds(100), limit: .seconds(1))
                == .milliseconds(milliseconds))
    }

    /// Once the back-off after a failed connect has passed and a new connect starts, no timer is left in the past
    /// (which would make every loop turn a timer turn until the connect ends).
    @Test func aPassedBackOffLeavesNoTimerBehind() {
        var pool = machine()
        #expect(pool.requestSubmitted(1, deadline: later, now: t0) == [.openConnection(1)])
        let refused = HTTP2Error(.connectFailed, detail: "refused")
        #expect(pool.connectionClosed(1, error: refused, now: t0) == [.failRequest(1, refused)])
        let t1 = t0 + .milliseconds(500)
        #expect(pool.requestSubmitted(2, deadline: later, now: t1) == [.openConnection(2)])
        #expect(pool.nextDeadline.map { $0 > t1 } == true, "a timer is due in the past")
    }

    /// A server that completes the handshake and closes before its SETTINGS is a failed connect: the next connect
    /// waits for the back-off instead of following at once, again and again.
    @Test func aConnectionLostBeforeItsSettingsBacksOff() {
        var pool = machine()
        #expect(pool.requestSubmitted(1, deadline: later, now: t0) == [.openConnection(1)])
        #expect(pool.connectionEstablished(1, now: t0) == [])
        let closed = HTTP2Error(.connectionLost, detail: "closed after the handshake")
        #expect(pool.connectionClosed(1, error: closed, now: t0) == [.failRequest(1, closed)])
        #expect(pool.requestSubmitted(2, deadline: later, now: t0 + .milliseconds(10)) == [.failRequest(2, closed)])
        #expect(pool.requestSubmitted(3, deadline: later, now: t0 + .milliseconds(200)) == [.openConnection(2)])
    }

    @Test func aConnectThatTakesTooLongFails() {
        var pool = machine(maxConnections: 1)
        _ = pool.requestSubmitted(1, deadline: later, now: t0)
        #expect(pool.nextDeadline == t0 + .seconds(5))
        let actions = pool.tick(now: t0 + .seconds(5))
        #expect(actions.first == .closeConnection(1, graceful: false))
        guard case .failRequest(1, let error) = actions.last else {
            Issue.record("expected the request to fail: \(actions)")
            return
        }
        #expect(error.kind == .connectFailed)
    }

    @Test func deadlinesFailQueuedRequestsAndResetActiveStreams() {
        var pool = ready(limit: 1, maxConnections: 1)
        #expect(pool.requestSubmitted(2, deadline: t0 + .seconds(1), now: t0) == [.startStream(2, 1)])
        #expect(pool.requestSubmitted(3, deadline: t0 + .seconds(2), now: t0) == [])
        #expect(pool.nextDeadline == t0 + .seconds(1))
        let first = pool.tick(now: t0 + .seconds(1))
        guard case .cancelStream(2, 1, let error)? = first.first else {
            Issue.record("expected request 2's stream reset: \(first)")
            return
        }
        #expect(error.kind == .timeout)
        #expect(error.requestSent, "a request on a stream may have reached the server")
        #expect(first.dropFirst() == [.startStream(3, 1)], "the freed stream goes to the next request")
        // A stream reset for its deadline is not reported again when nghttp2 closes it.
        #expect(pool.streamEnded(2, .failed(HTTP2Error(.streamReset)), now: t0 + .seconds(1)) == [])
        #expect(pool.tick(now: t0 + .seconds(2)).count == 1)
    }

    @Test func cancellationResetsAStreamOnceOrDropsAQueuedRequest() {
        var pool = ready(limit: 1, maxConnections: 1)
        _ = pool.requestSubmitted(2, deadline: later, now: t0)
        _ = pool.requestSubmitted(3, deadline: later, now: t0)
        let cancelled = HTTP2Error(.cancelled, detail: "the caller's task was cancelled")
        #expect(pool.requestCancelled(3, now: t0) == [.failRequest(3, cancelled)])
        #expect(pool.requestCancelled(2, now: t0) == [.cancelStream(2, 1, cancelled)])
        #expect(pool.requestCancelled(2, now: t0) == [], "once")
        #expect(pool.streamEnded(2, .answered, now: t0) == [], "an answer after the reset is not delivered")
        #expect(pool.queuedCount == 0 && pool.inFlightCount == 0)
    }

    /// A response that outgrows the limit resets its stream once; the caller's cancellation, the deadline and the
    /// stream's close arriving before that reset went out (the same loop turn) reset nothing more (issue 16, risk 1).
    @Test func aTooLargeResponseResetsItsStreamOnce() {
        var pool = ready(limit: 1, maxConnections: 1)
        #expect(pool.requestSubmitted(2, deadline: t0 + .seconds(1), now: t0) == [.startStream(2, 1)])
        #expect(pool.requestSubmitted(3, deadline: later, now: t0) == [])
        let actions = pool.responseTooLarge(2, limit: 1_024, now: t0)
        guard case .cancelStream(2, 1, let error)? = actions.first else {
            Issue.record("expected request 2's stream reset: \(actions)")
            return
        }
        #expect(error.kind == .responseTooLarge)
        #expect(actions.dropFirst() == [.startStream(3, 1)], "the freed stream goes to the next request")
        #expect(pool.requestCancelled(2, now: t0) == [], "the caller's cancel after it resets nothing")
        #expect(pool.responseTooLarge(2, limit: 1_024, now: t0) == [])
        #expect(pool.tick(now: t0 + .seconds(1)) == [], "nor does its deadline")
        #expect(pool.streamEnded(2, .failed(HTTP2Error(.responseTooLarge)), now: t0 + .seconds(1)) == [])
        #expect(pool.inFlightCount == 1 && pool.queuedCount == 0)
    }

    @Test func anUnansweredPingClosesTheConnectionAsOutcomeUnknown() {
        var pool = ready(limit: 100, maxConnections: 1, pingInterval: .seconds(10))
        _ = pool.requestSubmitted(2, deadline: t0 + .seconds(60), now: t0)
        #expect(pool.nextDeadline == t0 + .seconds(10))
        #expect(pool.tick(now: t0 + .seconds(10)) == [.sendPing(1)])
        #expect(pool.nextDeadline == t0 + .seconds(12))
        let actions = pool.tick(now: t0 + .seconds(12))
        #expect(actions.first == .closeConnection(1, graceful: false))
        guard case .failRequest(2, let error) = actions.dropFirst().first else {
            Issue.record("expected the stream to fail: \(actions)")
            return
        }
        #expect(error.kind == .connectionLost)
    }

    @Test func anAnsweredPingKeepsTheConnection() {
        var pool = ready(limit: 100, maxConnections: 1, pingInterval: .seconds(10))
        #expect(pool.tick(now: t0 + .seconds(10)) == [.sendPing(1)])
        pool.pingAcknowledged(1, now: t0 + .seconds(11))
        #expect(pool.tick(now: t0 + .seconds(13)) == [])
        #expect(pool.nextDeadline == t0 + .seconds(21))
        // Frames arriving also push the next PING back.
        pool.framesReceived(1, now: t0 + .seconds(20))
        #expect(pool.tick(now: t0 + .seconds(21)) == [])
    }

    @Test func oldConnectionsAreReplacedAndIdleOnesClosed() {
        var aged = machine(maxConnections: 1, maxAge: .seconds(100))
        _ = aged.requestSubmitted(1, deadline: t0 + .seconds(500), now: t0)
        _ = aged.connectionEstablished(1, now: t0)
        _ = aged.settingsReceived(1, maxConcurrentStreams: 10, now: t0)
        #expect(aged.tick(now: t0 + .seconds(100)) == [], "still carrying a stream: draining")
        #expect(aged.requestSubmitted(2, deadline: t0 + .seconds(500), now: t0 + .seconds(101)) == [.openConnection(2)])
        #expect(
            aged.streamEnded(1, .answered, now: t0 + .seconds(102)) == [
                .finishRequest(1), .closeConnection(1, graceful: true),
            ])

        var idle = machine(maxConnections: 1, maxIdle: .seconds(60))
        _ = idle.requestSubmitted(1, deadline: later, now: t0)
        _ = idle.connectionEstablished(1, now: t0)
        _ = idle.settingsReceived(1, maxConcurrentStreams: 10, now: t0)
        _ = idle.streamEnded(1, .answered, now: t0 + .seconds(1))
        #expect(idle.tick(now: t0 + .seconds(60)) == [], "idle for 59 s")
        #expect(idle.nextDeadline == t0 + .seconds(61))
        #expect(idle.tick(now: t0 + .seconds(61)) == [.closeConnection(1, graceful: true)])
        #expect(idle.connectionCount == 0)
    }

    /// A pool whose requests all finish in time never ticks; the deadlines of finished requests must still go.
    @Test func theDeadlineHeapStaysBoundedWithoutTicks() {
        var pool = ready(limit: 100, maxConnections: 1)
        for id in 2...100_001 as ClosedRange<UInt64> {
            #expect(pool.requestSubmitted(id, deadline: later, now: t0) == [.startStream(id, 1)])
            #expect(pool.streamEnded(id, .answered, now: t0) == [.finishRequest(id)])
        }
        #expect(pool.deadlineEntries < 2_000, "\(pool.deadlineEntries) entries for 100,000 finished requests")
    }

    /// A settled connection whose server allows no streams, forever: requests wait, and time out in the queue. What
    /// they leave behind must not pile up while others still wait (issue 16, risk 2).
    @Test func theQueueStaysBoundedWhileTheServerAllowsNoStreams() {
        var pool = ready(limit: 100, maxConnections: 1)
        #expect(pool.settingsReceived(1, maxConcurrentStreams: 0, now: t0) == [])
        // One request waits throughout, so the queue never empties (which would clear it).
        #expect(pool.requestSubmitted(2, deadline: t0 + .seconds(1_000_000), now: t0) == [])
        var now = t0
        var timedOut = 0
        for id in 3...100_002 as ClosedRange<UInt64> {
            now += .milliseconds(1)
            #expect(pool.requestSubmitted(id, deadline: now + .milliseconds(10), now: now) == [])
            timedOut += pool.tick(now: now).count {
                if case .failRequest(_, let error) = $0 { error.kind == .timeout } else { false }
            }
        }
        #expect(timedOut == 100_000 - 10)
        #expect(pool.queuedCount == 11)
        #expect(pool.queueEntries < 200, "\(pool.queueEntries) entries for \(pool.queuedCount) waiting requests")
        // The waiting ones still go first, in order, once the server allows streams again.
        let started = pool.settingsReceived(1, maxConcurrentStreams: 100, now: now)
        #expect(started == ([2] + Array(99_993...100_002)).map { .startStream($0, 1) })
    }

    @Test func theQueueIsBounded() {
        var pool = machine(maxConnections: 1, maxQueued: 2)
        _ = pool.requestSubmitted(1, deadline: later, now: t0)
        _ = pool.requestSubmitted(2, deadline: later, now: t0)
        let refused = pool.requestSubmitted(3, deadline: later, now: t0)
        guard case .failRequest(3, let error)? = refused.first else {
            Issue.record("expected a refusal: \(refused)")
            return
        }
        #expect(error.kind == .overloaded)
    }

    @Test func shutdownDrainsThenClosesEverything() {
        var pool = ready(limit: 1, maxConnections: 1)
        _ = pool.requestSubmitted(2, deadline: later, now: t0)
        _ = pool.requestSubmitted(3, deadline: later, now: t0)
        #expect(pool.shutdownRequested(deadline: t0 + .seconds(5), now: t0) == [])
        guard case .failRequest(4, let refusal)? = pool.requestSubmitted(4, deadline: later, now: t0).first else {
            Issue.record("a draining pool admitted a request")
            return
        }
        #expect(refusal.kind == .shuttingDown)
        #expect(pool.streamEnded(2, .answered, now: t0) == [.finishRequest(2), .startStream(3, 1)])
        #expect(
            pool.streamEnded(3, .answered, now: t0) == [.finishRequest(3), .closeConnection(1, graceful: true), .close])
        #expect(pool.isClosed)
    }

    @Test func theDrainDeadlineEndsWhatIsLeft() {
        var pool = ready(limit: 1, maxConnections: 1)
        _ = pool.requestSubmitted(2, deadline: later, now: t0)
        _ = pool.requestSubmitted(3, deadline: later, now: t0)
        _ = pool.shutdownRequested(deadline: t0 + .seconds(1), now: t0)
        let late = HTTP2Error(.shuttingDown, detail: "the drain deadline passed")
        #expect(
            pool.tick(now: t0 + .seconds(1)) == [
                .cancelStream(2, 1, late), .failRequest(3, late), .closeConnection(1, graceful: true), .close,
            ]
        )
    }

    /// Many random events against the rules that must always hold: every request ends exactly once, no connection
    /// carries more than its limit, and nothing is started on a connection that is not ready.
    @Test func randomEventsKeepEveryRequestEndingOnce() {
        var generator = SplitMix(seed: 7)
        var pool = machine(maxConnections: 3, maxConcurrentStreams: 4, maxQueued: 50)
        var now = t0
        var nextRequest: UInt64 = 1
        var ended: [UInt64: Int] = [:]
        var active: [UInt64: UInt64] = [:]  // request → connection
        var connecting: Set<UInt64> = []
        var up: Set<UInt64> = []
        var perConnection: [UInt64: Int] = [:]
        func apply(_ actions: [Machine.Action]) {
            for action in actions {
                switch action {
                case .openConnection(let id): connecting.insert(id)
                case .startStream(let request, let connection):
                    #expect(up.contains(connection), "started on a connection that is not up")
                    active[request] = connection
                    perConnection[connection, default: 0] += 1
                    #expect(perConnection[connection, default: 0] <= 4)
                case .finishRequest(let request), .failRequest(let request, _), .cancelStream(let request, _, _):
                    ended[request, default: 0] += 1
                    if let connection = active.removeValue(forKey: request) {
                        perConnection[connection, default: 0] -= 1
                    }
                case .closeConnection(let id, let graceful):
                    up.remove(id)
                    connecting.remove(id)
                    // A graceful close comes only for a connection without streams; a forced one (PING or connect
                    // timeout) is followed by its streams' failures.
                    if graceful { #expect(!active.values.contains(id), "closed a connection that still had streams") }
                case .sendPing, .close: break
                }
            }
        }
        for _ in 0..<20_000 {
            now += .milliseconds(Int(generator.next() % 50))
            switch generator.next() % 8 {
            case 0, 1:
                let deadline = now + .seconds(Int(generator.next() % 5 + 1))
                let fresh = generator.next() % 20 == 0
                apply(pool.requestSubmitted(nextRequest, deadline: deadline, freshConnection: fresh, now: now))
                nextRequest += 1
            case 2:
                if let id = connecting.randomElement(using: &generator) {
                    connecting.remove(id)
                    up.insert(id)
                    apply(pool.connectionEstablished(id, now: now))
                    apply(pool.settingsReceived(id, maxConcurrentStreams: Int(generator.next() % 6), now: now))
                }
            case 3:
                if let (request, _) = active.randomElement(using: &generator) {
                    let ends: [HTTP2Pool.StreamEnd] = [.answered, .notProcessed, .failed(HTTP2Error(.streamReset))]
                    let end = ends[Int(generator.next() % 3)]
                    if end == .notProcessed, let connection = active.removeValue(forKey: request) {
                        perConnection[connection, default: 0] -= 1
                    }
                    apply(pool.streamEnded(request, end, now: now))
                }
            case 4:
                if let id = up.randomElement(using: &generator) { apply(pool.goAwayReceived(id, now: now)) }
            case 5:
                if let id = (up.union(connecting)).randomElement(using: &generator) {
                    up.remove(id)
                    connecting.remove(id)
                    apply(pool.connectionClosed(id, error: HTTP2Error(.connectionLost), now: now))
                    #expect(!active.values.contains(id), "a stream of a lost connection did not fail")
                }
            case 6:
                apply(pool.requestCancelled(UInt64(generator.next() % max(1, nextRequest)) + 1, now: now))
            default:
                apply(pool.tick(now: now))
            }
        }
        apply(pool.shutdownRequested(deadline: now + .seconds(10), now: now))
        apply(pool.tick(now: now + .seconds(10)))
        #expect(pool.isClosed)
        #expect(ended.values.allSatisfy { $0 == 1 }, "a request ended twice")
        #expect(ended.count == Int(nextRequest - 1), "every request ended: \(ended.count) of \(nextRequest - 1)")
    }
}

/// A small deterministic generator for the random-events test.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
