import Foundation
import RelaySimulator
import Synchronization
import Testing

@testable import RelayHTTP2

/// Helpers shared by the live transport suites: sending bursts and collecting every outcome, patterned bodies, and a
/// barrier after which the server has read every frame the client sent.
enum LiveTransport {
    /// Sends one request and returns what it ended with; an error other than ``HTTP2Error`` is recorded as an issue.
    static func outcome(_ pool: HTTP2Pool, _ request: HTTP2Request) async -> Result<HTTP2Response, HTTP2Error> {
        do {
            return .success(try await pool.send(request))
        } catch let error as HTTP2Error {
            return .failure(error)
        } catch {
            Issue.record("expected an HTTP2Error, got \(error)")
            return .failure(HTTP2Error(.other, detail: "\(error)"))
        }
    }

    /// Sends one request that must fail and returns its error, recording an issue if a response came back.
    static func failure(_ pool: HTTP2Pool, _ request: HTTP2Request) async -> HTTP2Error? {
        switch await outcome(pool, request) {
        case .success(let response):
            Issue.record("expected a failure, got status \(response.status)")
            return nil
        case .failure(let error):
            return error
        }
    }

    /// Sends `count` requests at once and returns each one's outcome by number.
    static func burst(
        _ pool: HTTP2Pool,
        count: Int,
        request: @escaping @Sendable (Int) -> HTTP2Request
    ) async -> [Int: Result<HTTP2Response, HTTP2Error>] {
        await withTaskGroup(of: (Int, Result<HTTP2Response, HTTP2Error>).self) { group in
            for number in 0..<count {
                group.addTask { (number, await outcome(pool, request(number))) }
            }
            return await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
    }

    /// Records an issue for every request that failed or whose response is not its own (the server echoes
    /// `x-request`): a success must carry its own answer. Returns the number of such requests.
    @discardableResult
    static func expectAllAnswered(
        _ outcomes: [Int: Result<HTTP2Response, HTTP2Error>],
        count: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        #expect(outcomes.count == count, "every request ended", sourceLocation: sourceLocation)
        var bad = 0
        for (number, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
            switch outcome {
            case .success(let response) where response.header("x-request") == "\(number)":
                continue
            case .success(let response):
                Issue.record(
                    "request \(number) got the answer of \(response.header("x-request") ?? "none")",
                    sourceLocation: sourceLocation)
            case .failure(let error):
                Issue.record("request \(number) failed: \(error)", sourceLocation: sourceLocation)
            }
            bad += 1
            if bad >= 5 { break }  // the first few say enough
        }
        return bad
    }

    /// `count` bytes that depend on `seed`, so a body shifted, truncated or swapped with another shows: a window into
    /// a fixed pseudo-random block at an offset chosen by `seed`, with `seed` itself in the first eight bytes. Cheap
    /// (one copy), because handlers make them on the server's tasks, which every test running at once shares.
    static func pattern(_ seed: Int, count: Int) -> [UInt8] {
        precondition(count <= patternBlock.count - 256, "pattern bodies are at most 128 KiB")
        let offset = (seed &* 7919) & 0xFF
        var bytes = Array(patternBlock[offset..<offset + count])
        withUnsafeBytes(of: UInt64(truncatingIfNeeded: seed).littleEndian) { seedBytes in
            for index in 0..<min(8, count) { bytes[index] = seedBytes[index] }
        }
        return bytes
    }

    /// Whether two byte arrays are equal, compared with `memcmp` (element-wise `==` is slow in debug builds).
    static func same(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        left.count == right.count
            && left.withUnsafeBytes { l in
                right.withUnsafeBytes { r in memcmp(l.baseAddress!, r.baseAddress!, l.count) == 0 }
            }
    }

    private static let patternBlock: [UInt8] = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return (0..<(128 * 1024 + 256)).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }()

    /// Shuts the pool down and waits until the server has closed every connection: by then the server has read
    /// every frame the client sent, so its reset counters are final.
    static func settle(_ pool: HTTP2Pool, _ server: HTTP2TestServer) async throws -> HTTP2TestServerStatistics {
        await pool.shutdown()
        return try await server.waitForStatistics { $0.connectionsOpen == 0 }
    }
}

/// The requests a test server's handler saw, by `x-request`, with the connection and stream that carried each.
final class Sightings: Sendable {
    struct Sighting: Sendable, Equatable {
        var connectionID: Int
        var streamID: Int
    }

    private let seen = Mutex<[String: [Sighting]]>([:])

    /// Records the request and returns how often its `x-request` was seen, this time included.
    @discardableResult
    func record(_ request: HTTP2TestRequest) -> Int {
        let key = request.header("x-request") ?? ""
        let sighting = Sighting(connectionID: request.connectionID, streamID: request.streamID)
        return seen.withLock { seen in
            seen[key, default: []].append(sighting)
            return seen[key]?.count ?? 0
        }
    }

    subscript(_ key: String) -> [Sighting] {
        seen.withLock { $0[key] ?? [] }
    }

    var all: [String: [Sighting]] {
        seen.withLock { $0 }
    }
}

/// Holds handlers until `count` have arrived, then releases all of them with the stream ids of every arrival,
/// sorted. Cancellation (a server shutting down after a failed test) releases a waiting handler at once.
final class Rendezvous: Sendable {
    private struct State {
        var streamIDs: [Int] = []
        var waiting: [Int: CheckedContinuation<[Int], Never>] = [:]
        var released: [Int]?
    }

    private let count: Int
    private let state = Mutex(State())

    init(count: Int) {
        self.count = count
    }

    func arrive(streamID: Int) async -> [Int] {
        let (ticket, opened) = state.withLock { state -> (Int, [CheckedContinuation<[Int], Never>]?) in
            if state.released != nil { return (0, nil) }
            state.streamIDs.append(streamID)
            let ticket = state.streamIDs.count
            guard ticket >= count else { return (ticket, nil) }
            state.released = state.streamIDs.sorted()
            defer { state.waiting = [:] }
            return (ticket, Array(state.waiting.values))
        }
        if let opened {
            let ids = state.withLock { $0.released ?? [] }
            for continuation in opened { continuation.resume(returning: ids) }
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ids = state.withLock { state -> [Int]? in
                    if let released = state.released { return released }
                    if Task.isCancelled { return [] }
                    state.waiting[ticket] = continuation
                    return nil
                }
                if let ids { continuation.resume(returning: ids) }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: ticket) }?.resume(returning: [])
        }
    }
}
