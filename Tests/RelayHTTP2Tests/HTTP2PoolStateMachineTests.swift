import Testing

@testable import RelayHTTP2

/// The pool's decisions, fed scripted events at explicit instants; no sockets.
@Suite struct HTTP2PoolStateMachineTests {
    typealias Machine = HTTP2Pool.StateMachine
    let t0 = ContinuousClock.now
    var later: ContinuousClock.Instant { t0 + .seconds(10) }

    /// A machine past its first response, so admission is limited by `maxInFlight` alone.
    func warmMachine(maxInFlight: Int, maxQueued: Int) -> Machine {
        var machine = Machine(maxInFlight: maxInFlight, maxQueued: maxQueued)
        _ = machine.requestSubmitted(0, deadline: later, now: t0)
        _ = machine.transferFinished(0, now: t0)
        return machine
    }

    @Test func oneRequestAtATimeUntilTheFirstResponse() {
        var machine = Machine(maxInFlight: 100, maxQueued: 10)
        #expect(machine.requestSubmitted(1, deadline: later, now: t0) == .startTransfer(1))
        #expect(machine.requestSubmitted(2, deadline: later, now: t0) == nil)
        #expect(machine.requestSubmitted(3, deadline: later, now: t0) == nil)
        // A failure without a response teaches nothing about the server: still one at a time.
        #expect(machine.transferFinished(1, answered: false, now: t0) == [.startTransfer(2)])
        // The first response opens the pool to its full width.
        #expect(machine.transferFinished(2, answered: true, now: t0) == [.startTransfer(3)])
        #expect(machine.requestSubmitted(4, deadline: later, now: t0) == .startTransfer(4))
        #expect(machine.inFlightCount == 2)
    }

    @Test func admitsUpToMaxInFlightThenQueues() {
        var machine = warmMachine(maxInFlight: 2, maxQueued: 10)
        #expect(machine.requestSubmitted(1, deadline: later, now: t0) == .startTransfer(1))
        #expect(machine.requestSubmitted(2, deadline: later, now: t0) == .startTransfer(2))
        #expect(machine.requestSubmitted(3, deadline: later, now: t0) == nil)
        #expect(machine.inFlightCount == 2)
        #expect(machine.queuedCount == 1)
    }

    @Test func finishedTransferStartsTheOldestWaitingRequest() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        _ = machine.requestSubmitted(1, deadline: later, now: t0)
        _ = machine.requestSubmitted(2, deadline: later, now: t0)
        _ = machine.requestSubmitted(3, deadline: later, now: t0)
        #expect(machine.transferFinished(1, now: t0) == [.startTransfer(2)])
        #expect(machine.transferFinished(2, now: t0) == [.startTransfer(3)])
        #expect(machine.transferFinished(3, now: t0) == [])
        #expect(machine.inFlightCount == 0 && machine.queuedCount == 0)
    }

    @Test func newRequestsDoNotOvertakeWaitingOnes() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        _ = machine.requestSubmitted(1, deadline: later, now: t0)
        _ = machine.requestSubmitted(2, deadline: later, now: t0)
        #expect(machine.transferFinished(1, now: t0) == [.startTransfer(2)])
        // 2 is in flight now; 3 must wait behind nobody but still respect the limit.
        #expect(machine.requestSubmitted(3, deadline: later, now: t0) == nil)
    }

    @Test func fullQueueRefusesAsOverloaded() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 1)
        _ = machine.requestSubmitted(1, deadline: later, now: t0)
        _ = machine.requestSubmitted(2, deadline: later, now: t0)
        guard case .failRequest(3, let error)? = machine.requestSubmitted(3, deadline: later, now: t0) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.kind == .overloaded)
        #expect(error.isRetryable)
    }

    @Test func queuedRequestsExpireAtTheirDeadline() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        _ = machine.requestSubmitted(1, deadline: later, now: t0)
        _ = machine.requestSubmitted(2, deadline: t0 + .seconds(1), now: t0)
        #expect(machine.nextDeadline == t0 + .seconds(1))
        #expect(machine.tick(now: t0 + .milliseconds(999)) == [])
        let actions = machine.tick(now: t0 + .seconds(1))
        guard case .failRequest(2, let error)? = actions.first, actions.count == 1 else {
            Issue.record("expected request 2 to time out, got \(actions)")
            return
        }
        #expect(error.kind == .timeout)
        #expect(machine.queuedCount == 0)
        #expect(machine.nextDeadline == nil)
    }

    @Test func expiredWaitingRequestIsNotStartedWhenAStreamFrees() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        _ = machine.requestSubmitted(1, deadline: later, now: t0)
        _ = machine.requestSubmitted(2, deadline: t0 + .seconds(1), now: t0)
        _ = machine.requestSubmitted(3, deadline: later, now: t0)
        let actions = machine.transferFinished(1, now: t0 + .seconds(2))
        #expect(actions.count == 2)
        guard case .failRequest(2, let error) = actions[0] else {
            Issue.record("expected 2 to fail, got \(actions)")
            return
        }
        #expect(error.kind == .timeout)
        #expect(actions[1] == .startTransfer(3))
    }

    @Test func requestWithPastDeadlineFailsAtOnce() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        guard case .failRequest(1, let error)? = machine.requestSubmitted(1, deadline: t0, now: t0) else {
            Issue.record("expected a timeout")
            return
        }
        #expect(error.kind == .timeout)
    }

    @Test func cancellingAQueuedRequestFailsItWithoutTouchingCurl() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        _ = machine.requestSubmitted(1, deadline: later, now: t0)
        _ = machine.requestSubmitted(2, deadline: later, now: t0)
        _ = machine.requestSubmitted(3, deadline: later, now: t0)
        let actions = machine.requestCancelled(2, now: t0)
        guard case .failRequest(2, let error)? = actions.first, actions.count == 1 else {
            Issue.record("expected 2 to fail, got \(actions)")
            return
        }
        #expect(error.kind == .cancelled)
        #expect(machine.queuedCount == 1)
        // The cancelled request is skipped: 3 is next.
        #expect(machine.transferFinished(1, now: t0) == [.startTransfer(3)])
    }

    @Test func cancellingAnInFlightRequestAbortsItAndStartsTheNext() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        _ = machine.requestSubmitted(1, deadline: later, now: t0)
        _ = machine.requestSubmitted(2, deadline: later, now: t0)
        let actions = machine.requestCancelled(1, now: t0)
        #expect(actions.count == 2)
        guard case .abortTransfer(1, let error) = actions.first else {
            Issue.record("expected 1 to be aborted, got \(actions)")
            return
        }
        #expect(error.kind == .cancelled)
        #expect(actions.last == .startTransfer(2))
        // A late finish of the aborted transfer changes nothing.
        #expect(machine.transferFinished(1, now: t0) == [])
    }

    @Test func cancellingAnUnknownRequestDoesNothing() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        #expect(machine.requestCancelled(42, now: t0) == [])
    }

    @Test func shutdownRefusesNewRequestsAndClosesWhenDrained() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        _ = machine.requestSubmitted(1, deadline: later, now: t0)
        _ = machine.requestSubmitted(2, deadline: later, now: t0)
        #expect(machine.shutdownRequested(deadline: t0 + .seconds(5), now: t0) == [])
        #expect(!machine.isAdmitting)
        guard case .failRequest(3, let error)? = machine.requestSubmitted(3, deadline: later, now: t0) else {
            Issue.record("expected a refusal while draining")
            return
        }
        #expect(error.kind == .shuttingDown)
        // Admitted work still finishes: the queued request starts, then the pool closes.
        #expect(machine.transferFinished(1, now: t0) == [.startTransfer(2)])
        #expect(machine.transferFinished(2, now: t0) == [.close])
        #expect(machine.isClosed)
    }

    @Test func shutdownOfAnIdlePoolClosesAtOnce() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        #expect(machine.shutdownRequested(deadline: t0 + .seconds(5), now: t0) == [.close])
    }

    @Test func drainDeadlineAbortsWhatIsLeft() {
        var machine = warmMachine(maxInFlight: 1, maxQueued: 10)
        _ = machine.requestSubmitted(1, deadline: t0 + .seconds(60), now: t0)
        _ = machine.requestSubmitted(2, deadline: t0 + .seconds(60), now: t0)
        _ = machine.shutdownRequested(deadline: t0 + .seconds(5), now: t0)
        #expect(machine.nextDeadline == t0 + .seconds(5))
        let actions = machine.tick(now: t0 + .seconds(5))
        #expect(actions.count == 3)
        guard case .failRequest(2, let queuedError) = actions[0], case .abortTransfer(1, let inFlightError) = actions[1]
        else {
            Issue.record("unexpected actions \(actions)")
            return
        }
        #expect(queuedError.kind == .shuttingDown)
        #expect(inFlightError.kind == .shuttingDown)
        #expect(actions[2] == .close)
    }

    @Test func everyRequestEndsExactlyOnce() {
        // A long random-looking script: submissions, finishes, cancellations and ticks. Each id must reach exactly one
        // terminal action (finish via transferFinished counts for started ones).
        var machine = warmMachine(maxInFlight: 3, maxQueued: 5)
        var started: Set<UInt64> = []
        var ended: [UInt64: Int] = [:]
        var now = t0
        func record(_ actions: [Machine.Action]) {
            for action in actions {
                switch action {
                case .startTransfer(let id): started.insert(id)
                case .failRequest(let id, _), .abortTransfer(let id, _): ended[id, default: 0] += 1
                case .close: break
                }
            }
        }
        for id in UInt64(1)...200 {
            now += .milliseconds(7)
            record(machine.requestSubmitted(id, deadline: now + .milliseconds(Int64(id % 5) * 20), now: now).map { [$0] } ?? [])
            if id % 3 == 0, let done = started.subtracting(ended.keys).min() {
                ended[done, default: 0] += 1
                record(machine.transferFinished(done, now: now))
            }
            if id % 7 == 0 { record(machine.requestCancelled(id - 2, now: now)) }
            record(machine.tick(now: now))
        }
        record(machine.shutdownRequested(deadline: now + .seconds(1), now: now))
        record(machine.tick(now: now + .seconds(1)))
        #expect(machine.isClosed)
        #expect(ended.count == 200, "every request ended")
        #expect(ended.values.allSatisfy { $0 == 1 }, "no request ended twice")
    }
}
