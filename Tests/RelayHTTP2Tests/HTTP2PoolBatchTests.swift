import Foundation
import NIOHTTP2
import RelaySimulator
import Synchronization
import Testing

@testable import RelayHTTP2

/// ``HTTP2Pool/send(all:)``: many requests handed over at once, each its own stream with its own result, on both
/// backends against the loopback HTTP/2-over-TLS server.
@Suite(.timeLimit(.minutes(1)))
struct HTTP2PoolBatchTests {
    typealias Support = HTTP2PoolTests

    @Test(arguments: HTTP2Backend.allCases)
    func everyRequestOfABatchGetsItsOwnResponseInOrder(backend: HTTP2Backend) async throws {
        let server = try await HTTP2TestServer.start(
            configuration: .init(maxConcurrentStreams: 200), handler: Support.echo)
        let pool = try Support.pool(for: server, backend: backend, maxConnections: 2, maxConcurrentStreams: 200)
        let requests = (0..<500).map { Support.request(server, $0) }
        let results = await pool.send(all: requests)
        #expect(results.count == 500)
        for (number, result) in results.enumerated() {
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.header("x-request") == "\(number)", "the response of request \(number)")
            #expect(String(decoding: response.body, as: UTF8.self) == "\(requests[number].body.count)")
        }
        #expect(server.statistics.streamsTotal == 500)
        #expect(server.statistics.resetsReceived == 0, "no stream of a batch that completed was reset")
        #expect(pool.statistics.completed == 500)
        #expect(pool.statistics.connectionsOpened <= 2)
        #expect(try await pool.send(all: []).isEmpty)
        await pool.shutdown()
        try await server.shutdown()
    }

    @Test(arguments: HTTP2Backend.allCases)
    func eachRequestOfABatchEndsOnItsOwn(backend: HTTP2Backend) async throws {
        // Request 1 is reset, request 2 times out, the rest are answered: each result is its own request's.
        let server = try await HTTP2TestServer.start { request in
            switch request.header("x-request") {
            case "1": .resetStream(code: .internalError)
            case "2": .respond(HTTP2TestResponse(status: 200, headers: [], body: []), delay: .seconds(30))
            default: Support.echoResponse(request)
            }
        }
        let pool = try Support.pool(for: server, backend: backend)
        let requests = (0..<5).map { Support.request(server, $0, timeout: $0 == 2 ? .milliseconds(300) : nil) }
        let results = await pool.send(all: requests)
        #expect(results.count == 5)
        for number in [0, 3, 4] {
            #expect(try results[number].get().header("x-request") == "\(number)")
        }
        #expect(throws: HTTP2Error.self) { try results[1].get() }
        #expect((results[1].error as? HTTP2Error)?.kind == .streamReset)
        #expect((results[2].error as? HTTP2Error)?.kind == .timeout)
        await pool.shutdown(gracePeriod: .zero)
        try await server.shutdown()
    }

    @Test(arguments: HTTP2Backend.allCases)
    func cancellingABatchEndsEveryRequestAsCancelled(backend: HTTP2Backend) async throws {
        let arrived = AsyncStream<Void>.makeStream()
        let server = try await HTTP2TestServer.start { request in
            guard request.header("x-request") != "9" else { return Support.echoResponse(request) }
            arrived.continuation.yield()
            return .respond(HTTP2TestResponse(status: 200, headers: [], body: []), delay: .seconds(30))
        }
        let pool = try Support.pool(for: server, backend: backend)
        // A first answer: the pool fills a connection only once it has one (the server's SETTINGS came before it).
        #expect(try await pool.send(Support.request(server, 9)).status == 200)
        let task = Task { await pool.send(all: (0..<3).map { Support.request(server, $0) }) }
        var iterator = arrived.stream.makeAsyncIterator()
        for _ in 0..<3 { _ = await iterator.next() }  // every request is on the wire
        task.cancel()
        let results = await task.value
        #expect(results.count == 3)
        #expect(results.allSatisfy { $0.error is CancellationError }, "\(results)")
        #expect(pool.statistics.failed[.cancelled] == 3)
        #expect(pool.statistics.streamsInFlight == 0)
        // The pool goes on working.
        #expect(try await pool.send(all: [Support.request(server, 9)])[0].get().status == 200)
        await pool.shutdown(gracePeriod: .zero)
        try await server.shutdown()
    }

    @Test(arguments: HTTP2Backend.allCases)
    func aBatchAfterShutdownIsRefusedAtOnce(backend: HTTP2Backend) async throws {
        let server = try await HTTP2TestServer.start(handler: Support.echo)
        let pool = try Support.pool(for: server, backend: backend)
        await pool.shutdown()
        let results = await pool.send(all: (0..<4).map { Support.request(server, $0) })
        #expect(results.count == 4)
        #expect(results.allSatisfy { ($0.error as? HTTP2Error)?.kind == .shuttingDown }, "\(results)")
        #expect(server.statistics.streamsTotal == 0)
        try await server.shutdown()
    }

    @Test func aBatchRefusedBeforeTheOwnerResumesItsCallerOnceWithEveryResult() async {
        let shared = HTTP2Pool.Shared(wake: {})
        _ = shared.ownerExiting()
        var requests = (0..<3).map { HTTP2Request(url: "https://127.0.0.1/3/device/\($0)") }
        let results = await withUnsafeContinuation { continuation in
            shared.submit(
                first: shared.reserve(3), requests: &requests, timeout: { _ in .seconds(1) },
                batch: HTTP2Pool.Batch(count: 3, continuation: continuation))
        }
        #expect(results.count == 3)
        #expect(results.allSatisfy { ($0.error as? HTTP2Error)?.kind == .shuttingDown })
    }

    /// The owner's side played by hand: the batch's requests arrive as one hand-over with one wake-up, each under
    /// its own reserved id, and the caller is resumed once, with every result in its request's place, whatever the
    /// order in which they end.
    @Test func aBatchReachesTheOwnerAsOneHandOverAndResumesItsCallerOnce() async {
        let wakes = Atomic<Int>(0)
        let shared = HTTP2Pool.Shared(wake: { wakes.add(1, ordering: .relaxed) })
        let first = shared.reserve(4)
        #expect(shared.reserve() == first + 4, "the batch's ids are reserved together")
        var requests = (0..<4).map { HTTP2Request(url: "https://127.0.0.1/\($0)") }
        let results = await withUnsafeContinuation { continuation in
            shared.submit(
                first: first, requests: &requests,
                timeout: { _ in .seconds(1) }, batch: HTTP2Pool.Batch(count: 4, continuation: continuation))
            var events: [HTTP2Pool.Event] = []
            shared.exchange(into: &events)
            #expect(events.count == 4)
            #expect(wakes.load(ordering: .relaxed) == 1, "one wake-up for the batch")
            for event in events.reversed() {
                guard case .submit(let id, let request, _, let completion) = event else {
                    Issue.record("not a submission: \(event)")
                    continue
                }
                #expect(request.url == "https://127.0.0.1/\(id - first)")
                completion.resume(returning: HTTP2Response(status: 200 + Int(id - first), headers: [], body: []))
            }
        }
        #expect(results.compactMap { try? $0.get().status } == [200, 201, 202, 203])
    }
}

extension Result {
    fileprivate var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
