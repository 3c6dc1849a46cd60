import RelayCore
import Testing

@testable import RelayApplication

/// The one timer behind every request's wait: what fires, what does not, and when its loop ends.
@Suite(.timeLimit(.minutes(1)))
struct DeadlineTimerTests {
    /// Runs a timer on `clock` and hands its fired labels to `body` as a stream; stops the timer after `body`.
    func withTimer(
        clock: RelayClock = .system,
        _ body: (DeadlineTimer, AsyncStream<String>, AsyncStream<String>.Continuation) async throws -> Void
    ) async throws {
        let timer = DeadlineTimer(clock: clock)
        let (fired, sink) = AsyncStream.makeStream(of: String.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await timer.run() }
            try await body(timer, fired, sink)
            timer.stop()
            try await group.waitForAll()
        }
    }

    @Test func anActionRunsOnceItsDeadlineHasPassed() async throws {
        try await withTimer { timer, fired, sink in
            let deadline = ContinuousClock.now + .milliseconds(20)
            _ = timer.schedule(at: deadline) { sink.yield("due") }
            var iterator = fired.makeAsyncIterator()
            #expect(await iterator.next() == "due")
            #expect(ContinuousClock.now >= deadline)
        }
    }

    /// On the relay's clock, a deadline passes when the clock reaches it: an hour goes by without waiting an hour
    /// (the time limit is a minute), and a later deadline stays put.
    @Test func aDeadlinePassesWhenTheRelaysClockReachesIt() async throws {
        let clock = ManualClock()
        let start = clock.now
        try await withTimer(clock: .manual(clock)) { timer, fired, sink in
            let later = timer.schedule(at: start + .seconds(7200)) { sink.yield("two hours") }
            _ = timer.schedule(at: start + .seconds(3600)) { sink.yield("an hour at \(clock.now - start)") }
            var iterator = fired.makeAsyncIterator()
            clock.advance(by: .seconds(3599))
            clock.advance(by: .seconds(1))
            #expect(await iterator.next() == "an hour at \(Duration.seconds(3600))")
            timer.cancel(later)
            sink.finish()
            #expect(await iterator.next() == nil, "the later deadline never ran")
        }
    }

    @Test func aCancelledDeadlineNeverRuns() async throws {
        try await withTimer { timer, fired, sink in
            let cancelled = timer.schedule(at: .now + .milliseconds(5)) { sink.yield("cancelled") }
            timer.cancel(cancelled)
            _ = timer.schedule(at: .now + .milliseconds(30)) { sink.yield("kept") }
            var iterator = fired.makeAsyncIterator()
            #expect(await iterator.next() == "kept")
        }
    }

    /// The loop sleeps toward the earliest deadline it knows; a sooner one added meanwhile must wake it, or this test
    /// would wait an hour (and fail at its time limit).
    @Test func aSoonerDeadlineAddedWhileTheLoopSleepsTowardALaterOneStillRunsOnTime() async throws {
        try await withTimer { timer, fired, sink in
            let late = timer.schedule(at: .now + .seconds(3600)) { sink.yield("late") }
            var iterator = fired.makeAsyncIterator()
            _ = timer.schedule(at: .now + .milliseconds(10)) { sink.yield("first") }
            #expect(await iterator.next() == "first")
            // Now the loop has fired "first" and sleeps toward the hour.
            _ = timer.schedule(at: .now + .milliseconds(10)) { sink.yield("second") }
            #expect(await iterator.next() == "second")
            timer.cancel(late)
        }
    }

    /// A stopped timer still serves the deadlines it has, and its loop ends as soon as the last is cancelled rather
    /// than at that deadline.
    @Test func aStoppedTimerEndsWhenItsLastDeadlineIsCancelled() async throws {
        let timer = DeadlineTimer()
        let token = timer.schedule(at: .now + .seconds(3600)) {}
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await timer.run() }
            timer.stop()
            timer.cancel(token)
            await group.waitForAll()
        }
        // And with nothing scheduled, a stopped timer's loop returns at once.
        let idle = DeadlineTimer()
        idle.stop()
        await idle.run()
    }
}
