import Testing

@testable import RelayHTTP2

/// The inbox between callers and a pool's owner, without an owner: the order in which an exiting owner refuses
/// submissions and releases the shutdown's waiters.
@Suite struct HTTP2PoolSharedTests {
    /// The owner's exit sets the refusal and hands it the shutdown's waiters rather than resuming them: it resumes
    /// them last, once it has closed everything, so `shutdown()` never returns while a send could still be taken
    /// (issue 16, risk 4).
    @Test func anExitingOwnerRefusesSubmissionsBeforeItReleasesTheShutdownWaiters() async {
        let shared = HTTP2Pool.Shared(wake: {})
        let registered = AsyncStream<Void>.makeStream()
        let shutdown = Task {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                shared.requestShutdown(deadline: .now, waiter: waiter)
                registered.continuation.yield()
            }
        }
        var iterator = registered.stream.makeAsyncIterator()
        _ = await iterator.next()  // the waiter is in the inbox

        let (late, waiters) = shared.ownerExiting()
        #expect(late.count == 1, "the shutdown event, which the owner had not taken")
        #expect(waiters.count == 1, "handed to the owner, not resumed")
        do {
            _ = try await withUnsafeThrowingContinuation { continuation in
                shared.submit(
                    1, request: HTTP2Request(url: "https://127.0.0.1/3/device/x"), timeout: .seconds(3_600),
                    continuation: continuation)
            }
            Issue.record("a submission after the owner's exit was taken")
        } catch let error as HTTP2Error {
            #expect(error.kind == .shuttingDown)
        } catch {
            Issue.record("expected an HTTP2Error, got \(error)")
        }
        for waiter in waiters { waiter.resume() }
        await shutdown.value
    }
}
