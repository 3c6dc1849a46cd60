import Foundation
import HTTP2TestClient
import Metrics
import MetricsTestKit
import NIOCore
import Testing

@testable import RelayServer

/// `[server] max_connections` over real sockets: beyond the cap a plain connection is answered 503
/// `TOO_MANY_CONNECTIONS` and closed, a TLS connection is closed before its handshake; the connections within the cap
/// are served all along. Each test waits for the relay to close the refused connection (an event), never for a time.
@Suite(.timeLimit(.minutes(1)))
struct ConnectionCapTests {
    /// One connection at most, and timeouts far beyond the test's time limit, so that only the cap closes anything.
    static let one = ConnectionLimits(
        headerTimeout: .seconds(600), bodyTimeout: .seconds(600), idleTimeout: .seconds(600), maxConnections: 1)

    static let health = "GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n"

    /// Sends `request` and reads its response's head and body (`Content-Length`), leaving the connection open.
    static func exchange(
        _ request: String,
        _ inbound: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) async throws -> String {
        try await outbound.write(ByteBuffer(string: request))
        var answer = ""
        while let buffer = try await inbound.next() {
            answer += String(buffer: buffer)
            guard let end = answer.range(of: "\r\n\r\n") else { continue }
            let length =
                answer[..<end.lowerBound].split(separator: "\r\n")
                .first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            if answer.utf8.count - answer[..<end.upperBound].utf8.count >= length { break }
        }
        return answer
    }

    /// Sends `request` (a refusal may already have closed the connection, failing the write), then reads until the
    /// relay closes the connection; returns what it answered.
    static func sendAndReadAnswer(_ connection: SlowClientTests.Connection, _ request: String) async throws -> String {
        try await connection.executeThenClose { inbound, outbound in
            try? await outbound.write(ByteBuffer(string: request))
            var received = ""
            do {
                for try await buffer in inbound { received += String(buffer: buffer) }
            } catch {
                // A reset, or a TLS handshake cut short: the close is what is awaited.
            }
            return received
        }
    }

    @Test func theCountAdmitsUpToItsLimitAndCountsRefusals() {
        let metrics = TestMetrics()
        withMetricsFactory(metrics) {
            let connections = OpenConnections(limit: 2)
            #expect(connections.admit())
            #expect(connections.admit())
            #expect(!connections.admit())
            #expect(connections.count == 2)
            connections.closed()
            #expect(connections.admit())
            #expect(metrics.counterTotal(label: OpenConnections.refusalsCounterLabel) == 1)
        }
    }

    @Test func theListenerKeepsAcceptingUpToTheRefusalHeadroom() {
        var acceptor = OpenConnections(limit: 2).acceptor
        for _ in 0..<(2 + OpenConnections.refusalHeadroom) {
            #expect(acceptor.isAcceptingNewConnections())
            acceptor.connectionOpened()
        }
        #expect(!acceptor.isAcceptingNewConnections())
        acceptor.connectionClosed()
        #expect(acceptor.isAcceptingNewConnections())
    }

    @Test func aPlainConnectionBeyondTheCapIsAnswered503AndClosed() async throws {
        try await SlowClientTests.withListener(tls: false, limits: Self.one) { listener in
            let first = try await SlowClientTests.connect(listener)
            try await first.executeThenClose { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                // Served, and kept open: the one place under the cap is taken.
                #expect(try await Self.exchange(Self.health, &iterator, outbound).hasPrefix("HTTP/1.1 200"))
                // A flood of connections beyond the cap: each is answered and closed by the relay (the reads end
                // without the client closing), so none of them holds anything.
                for _ in 0..<20 {
                    let answer = try await Self.sendAndReadAnswer(
                        try await SlowClientTests.connect(listener), Self.health)
                    #expect(answer.hasPrefix("HTTP/1.1 503"))
                    #expect(answer.lowercased().contains("connection: close"))
                    #expect(answer.lowercased().contains("retry-after: 5"))
                    #expect(answer.contains(#""code":"TOO_MANY_CONNECTIONS""#))
                }
                // The connection within the cap is still served.
                #expect(try await Self.exchange(Self.health, &iterator, outbound).hasPrefix("HTTP/1.1 200"))
            }
        }
    }

    @Test func aTLSConnectionBeyondTheCapIsClosedBeforeItsHandshake() async throws {
        try await SlowClientTests.withListener(tls: true, limits: Self.one) { listener in
            let first = try await SlowClientTests.connect(listener)
            try await first.executeThenClose { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                #expect(try await Self.exchange(Self.health, &iterator, outbound).hasPrefix("HTTP/1.1 200"))
                // No handshake, so no answer: the client's TLS handshake fails and the connection ends.
                for _ in 0..<5 {
                    let answer = try await Self.sendAndReadAnswer(
                        try await SlowClientTests.connect(listener), Self.health)
                    #expect(answer.isEmpty)
                }
                #expect(try await Self.exchange(Self.health, &iterator, outbound).hasPrefix("HTTP/1.1 200"))
            }
        }
    }

    @Test func anHTTP2ConnectionWithinTheCapIsServedWhileOneBeyondItIsRefused() async throws {
        try await SlowClientTests.withListener(tls: true, limits: Self.one) { listener in
            let caFile = try #require(listener.caFile)
            let client = try await HTTP2TestClient.connect(port: listener.port, trusting: caFile)
            #expect(try await client.request(method: "GET", path: "/healthz").status == 200)
            await #expect(throws: (any Error).self) {
                let refused = try await HTTP2TestClient.connect(port: listener.port, trusting: caFile)
                await refused.close()
            }
            #expect(try await client.request(method: "GET", path: "/healthz").status == 200)
            await client.close()
        }
    }
}
