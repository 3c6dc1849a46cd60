import Foundation
import RelaySimulator
import Synchronization
import Testing

@testable import RelayHTTP2

/// The pool under load against the loopback HTTP/2-over-TLS server, on both backends: many more requests than
/// connections, a stream limit lowered mid-connection, a tiny flow-control window, and early answers.
///
/// Every test ends with ``LiveTransport/settle(_:_:)`` before it reads the server's reset counters: a stream that
/// completed normally is never reset (PROTOCOLS.md §7), so those counters must be 0.
@Suite(.timeLimit(.minutes(1)))
struct HTTP2PoolLoadTests {
    /// Deadlines that only a stalled stream reaches: the whole test run shares two cores, and a burst's deadline
    /// counts its time in the queue.
    static let deadline: Duration = .seconds(45)

    @Test(arguments: HTTP2Backend.allCases)
    func manyMoreRequestsThanConnectionsAllSucceedWithoutResets(backend: HTTP2Backend) async throws {
        let server = try await HTTP2TestServer.start(
            configuration: .init(maxConcurrentStreams: 100),
            handler: HTTP2PoolTests.echo
        )
        let pool = try HTTP2PoolTests.pool(
            for: server, backend: backend, maxConnections: 2, requestTimeout: Self.deadline)
        let outcomes = await LiveTransport.burst(pool, count: 2_000) { HTTP2PoolTests.request(server, $0) }
        LiveTransport.expectAllAnswered(outcomes, count: 2_000)
        let counters = pool.statistics
        #expect(counters.completed == 2_000)
        #expect(counters.failedTotal == 0)
        #expect(counters.resetsSent == 0)

        let seen = try await LiveTransport.settle(pool, server)
        if backend == .nghttp2 {
            #expect(seen.connectionsAccepted == 2, "2,000 requests over exactly the two connections allowed")
        } else {
            #expect(seen.connectionsAccepted <= 2)
        }
        #expect(seen.maxConcurrentStreamsSeen <= 100)
        #expect(seen.resetsReceived == 0, "no completed stream is reset")
        #expect(seen.resetsReceivedAfterResponse == 0)
        try await server.shutdown()
    }

    @Test(arguments: HTTP2Backend.allCases)
    func loweredStreamLimitIsRespectedMidConnection(backend: HTTP2Backend) async throws {
        let arrivals = AsyncStream<Void>.makeStream()
        let server = try await HTTP2TestServer.start(
            configuration: .init(maxConcurrentStreams: 100),
            handler: { request in
                arrivals.continuation.yield()
                return .respond(
                    HTTP2TestResponse(status: 200, headers: [("x-request", request.header("x-request") ?? "")]),
                    delay: .milliseconds(5)
                )
            }
        )
        let pool = try HTTP2PoolTests.pool(
            for: server, backend: backend, maxConnections: 2, requestTimeout: Self.deadline)
        let lowered = 5

        // The limit drops to 5 while the burst is in full flow.
        async let firstBurst = LiveTransport.burst(pool, count: 1_000) { HTTP2PoolTests.request(server, $0) }
        var iterator = arrivals.stream.makeAsyncIterator()
        for _ in 0..<150 { _ = await iterator.next() }
        let connections = server.statistics.connectionsOpen
        server.setMaxConcurrentStreams(lowered)
        try await server.waitForStatistics { $0.settingsChangesSent >= connections }
        LiveTransport.expectAllAnswered(await firstBurst, count: 1_000)

        // Once the streams of the first burst are gone, a second burst on the same connections stays within it.
        try await server.waitForStatistics { $0.streamsInFlight == 0 }
        server.resetMaxConcurrentStreamsSeen()
        let secondBurst = await LiveTransport.burst(pool, count: 300) { HTTP2PoolTests.request(server, 1_000 + $0) }
        for (number, outcome) in secondBurst {
            if case .success(let response) = outcome, response.header("x-request") == "\(1_000 + number)" { continue }
            Issue.record("request \(1_000 + number) of the second burst: \(outcome)")
            break
        }
        #expect(server.statistics.maxConcurrentStreamsSeen <= lowered, "the lowered limit holds on every connection")
        #expect(pool.statistics.failedTotal == 0)

        let seen = try await LiveTransport.settle(pool, server)
        if backend == .nghttp2 {
            #expect(seen.connectionsAccepted == 2, "no connection was lost to a stream-limit violation")
        }
        #expect(seen.resetsReceived == 0)
        try await server.shutdown()
    }

    @Test(arguments: HTTP2Backend.allCases)
    func tinyFlowControlWindowKeepsBodiesIntact(backend: HTTP2Backend) async throws {
        let requestBytes = 4 * 1024
        let responseBytes = 64 * 1024
        let intact = Mutex(0)
        let server = try await HTTP2TestServer.start(
            configuration: .init(maxConcurrentStreams: 100, initialWindowSize: 1024),
            handler: { request in
                let number = Int(request.header("x-request") ?? "") ?? -1
                if LiveTransport.same(request.body, LiveTransport.pattern(number, count: requestBytes)) {
                    intact.withLock { $0 += 1 }
                }
                return .respond(
                    HTTP2TestResponse(
                        status: 200,
                        headers: [("x-request", "\(number)")],
                        body: LiveTransport.pattern(number + 1_000_000, count: responseBytes)
                    )
                )
            }
        )
        // The curl backend's stalled uploads (the known issue below) would hold the test for the whole deadline.
        let pool = try HTTP2PoolTests.pool(
            for: server,
            backend: backend,
            maxConnections: 2,
            requestTimeout: backend == .curl ? .seconds(8) : Self.deadline
        )
        let count = 200
        let outcomes = await LiveTransport.burst(pool, count: count) { number in
            var request = HTTP2PoolTests.request(server, number)
            request.body = LiveTransport.pattern(number, count: requestBytes)
            return request
        }
        let seen = try await LiveTransport.settle(pool, server)
        try await server.shutdown()
        var damaged = 0
        for (number, outcome) in outcomes {
            guard case .success(let response) = outcome else { continue }
            if !LiveTransport.same(response.body, LiveTransport.pattern(number + 1_000_000, count: responseBytes)) {
                damaged += 1
            }
        }
        #expect(damaged == 0, "every 64 KB response that arrived is whole and unchanged")
        withKnownIssue(
            "curl backend: with a 1 KB stream window, a third or more of the uploads stall until their deadline",
            isIntermittent: true
        ) {
            LiveTransport.expectAllAnswered(outcomes, count: count)
            #expect(intact.withLock { $0 } == count, "every 4 KB request body arrived whole, in 1 KB windows")
            #expect(seen.resetsReceived == 0)
        } when: {
            backend == .curl
        }
    }

    /// nginx answers before it has read the whole body, then sends RST_STREAM(NO_ERROR): the answer counts
    /// (RFC 9113 §8.1).
    @Test(arguments: HTTP2Backend.allCases)
    func earlyAnswerFollowedByNoErrorResetIsASuccess(backend: HTTP2Backend) async throws {
        let server = try await HTTP2TestServer.start(
            configuration: .init(maxConcurrentStreams: 100, initialWindowSize: 1024, answerBeforeBody: true),
            handler: HTTP2PoolTests.echoResponse
        )
        let pool = try HTTP2PoolTests.pool(
            for: server, backend: backend, maxConnections: 2, requestTimeout: Self.deadline)
        let count = 200
        let outcomes = await LiveTransport.burst(pool, count: count) { number in
            var request = HTTP2PoolTests.request(server, number)
            request.body = LiveTransport.pattern(number, count: 64 * 1024)
            return request
        }
        LiveTransport.expectAllAnswered(outcomes, count: count)
        #expect(pool.statistics.failedTotal == 0)
        #expect(pool.statistics.completed == count)

        let seen = try await LiveTransport.settle(pool, server)
        #expect(seen.resetsSent > 0, "the server answered before the bodies were sent, and reset the streams")
        #expect(seen.resetsReceived == 0, "the client answers RST_STREAM(NO_ERROR) with nothing")
        try await server.shutdown()
    }

    /// A server may answer early and then neither reset the stream nor read on (RFC 9113 §8.1): the answer counts at
    /// once, and the stream, whose body can no longer go out, is reset at the request's deadline so that it does not
    /// hold a place in the connection's stream limit for ever.
    @Test(arguments: HTTP2Backend.allCases)
    func earlyAnswerOnAStreamTheServerKeepsOpenIsASuccess(backend: HTTP2Backend) async throws {
        let server = try await HTTP2TestServer.start(
            configuration: .init(
                maxConcurrentStreams: 100,
                initialWindowSize: 1024,
                answerBeforeBody: true,
                keepStreamAfterEarlyAnswer: true
            ),
            handler: HTTP2PoolTests.echoResponse
        )
        // Short enough that the stranded streams are reset within the test, long enough for 50 answers.
        let pool = try HTTP2PoolTests.pool(
            for: server, backend: backend, maxConnections: 1, requestTimeout: .seconds(10))
        let count = 50
        let outcomes = await LiveTransport.burst(pool, count: count) { number in
            var request = HTTP2PoolTests.request(server, number)
            request.body = LiveTransport.pattern(number, count: 16 * 1024)
            return request
        }
        withKnownIssue(
            "curl backend: libcurl reports a transfer only once its upload has ended, so the answer waits for the deadline",
            isIntermittent: true
        ) {
            LiveTransport.expectAllAnswered(outcomes, count: count)
            #expect(pool.statistics.failedTotal == 0)
            #expect(pool.statistics.completed == count)
        } when: {
            backend == .curl
        }
        if backend == .nghttp2 {
            // Each stranded stream is reset once, at its deadline: the server sees every stream closed.
            let seen = try await server.waitForStatistics { $0.streamsInFlight == 0 }
            #expect(seen.resetsReceived == count)
        }
        _ = try await LiveTransport.settle(pool, server)
        try await server.shutdown()
    }
}
