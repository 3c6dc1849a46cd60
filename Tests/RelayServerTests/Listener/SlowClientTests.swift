import Foundation
import HTTP2TestClient
import Hummingbird
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL
import RelaySimulator
import ServiceLifecycle
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Issue 20 over real sockets: clients that trickle their headers or body, or never finish a TLS handshake, are cut
/// off, plain and over TLS, HTTP/1.1 and HTTP/2 (`ConnectionCapTests`: what `max_connections` refuses). The timeouts
/// are short here and each test waits for the relay to close the connection (an event), never for a time; the
/// `RequestTimeoutHandlerTests` prove the durations on a clock the test moves.
@Suite(.timeLimit(.minutes(1)))
struct SlowClientTests {
    static let short = ConnectionLimits(
        headerTimeout: .milliseconds(200), bodyTimeout: .milliseconds(200), idleTimeout: .seconds(60),
        maxConnections: 64)

    struct Listener: Sendable {
        let port: Int
        let caFile: String?
        /// The tenant key of the relay behind it.
        var key = ""
    }

    /// Runs the relay on a free port (TLS when `tls`), gives the body its port, then shuts down.
    static func withListener(
        tls: Bool, limits: ConnectionLimits = short, body: @Sendable (Listener) async throws -> Void
    ) async throws {
        let relay = try await TestRelay()
        var pem: (String, String)?
        var caFile: String?
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relay-slow-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        if tls {
            let identity = try HTTP2TestIdentity.generate()
            let leaf = try identity.issueServerCertificate(host: "127.0.0.1")
            pem = (leaf.certificatePEM, leaf.privateKeyPEM)
            caFile = try identity.write(to: directory)
        }
        let ports = AsyncStream.makeStream(of: Int.self)
        let app = try buildApplication(
            RelayApplicationParts(
                relay: relay.relay, host: "127.0.0.1", port: 0, tls: pem, connections: limits,
                logger: relay.logs.logger,
                onServerRunning: { port in if let port { ports.continuation.yield(port) } }
            )
        )
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: relay.logs.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            try await body(Listener(port: port, caFile: caFile, key: relay.key))
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    typealias Connection = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// A raw connection: plain TCP, or TLS offering `alpn` and trusting `caFile`.
    static func connect(_ listener: Listener, alpn: [String] = ["http/1.1"]) async throws -> Connection {
        let context: NIOSSLContext? = try listener.caFile.map { caFile in
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.trustRoots = .file(caFile)
            configuration.applicationProtocols = alpn
            return try NIOSSLContext(configuration: configuration)
        }
        return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: listener.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: context, serverHostname: nil))
                    }
                    return try Connection(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// Sends `text`, then reads until the relay closes the connection; returns what it answered. A connection the
    /// relay closed before `text` could be written (a slow test machine, and a short header timeout) answered nothing.
    static func sendAndReadUntilClosed(_ connection: Connection, _ text: String) async throws -> String {
        try await connection.executeThenClose { inbound, outbound in
            do {
                if !text.isEmpty { try await outbound.write(ByteBuffer(string: text)) }
            } catch ChannelError.ioOnClosedChannel {
                return ""
            }
            var received = ""
            do {
                for try await buffer in inbound { received += String(buffer: buffer) }
            } catch {
                // A TLS connection closed without close_notify ends in an error; the close is what is awaited.
            }
            return received
        }
    }

    static let partialHeaders = "POST /v1/push HTTP/1.1\r\nHost: relay\r\nContent-Type: appl"
    static func partialBody(key: String?) -> String {
        "POST /v1/push HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
            + (key.map { "Authorization: Bearer \($0)\r\n" } ?? "") + "\r\n{\"mess"
    }

    @Test(arguments: [false, true])
    func aClientTricklingItsHeadersIsCutOff(tls: Bool) async throws {
        try await Self.withListener(tls: tls) { listener in
            let answer = try await Self.sendAndReadUntilClosed(try await Self.connect(listener), Self.partialHeaders)
            #expect(answer.isEmpty)
        }
    }

    @Test(arguments: [false, true])
    func aClientTricklingItsBodyIsCutOff(tls: Bool) async throws {
        // Headers get 10 s, so that they arrive in time on a loaded machine; the body gets 200 ms.
        var limits = Self.short
        limits.headerTimeout = .seconds(10)
        try await Self.withListener(tls: tls, limits: limits) { listener in
            let connection = try await Self.connect(listener)
            let answer = try await Self.sendAndReadUntilClosed(connection, Self.partialBody(key: listener.key))
            #expect(!answer.hasPrefix("HTTP/1.1 2"))
        }
    }

    @Test(arguments: [false, true])
    func aRequestRefusedBeforeItsBodyEndsClosesTheConnection(tls: Bool) async throws {
        try await Self.withListener(tls: tls, limits: ConnectionLimits()) { listener in
            let connection = try await Self.connect(listener)
            // No key: refused at once (401) with `Connection: close`; the rest of the body is never waited for, and
            // the default 30 s body timeout never comes into it.
            let answer = try await Self.sendAndReadUntilClosed(connection, Self.partialBody(key: nil))
            #expect(answer.hasPrefix("HTTP/1.1 401"))
            #expect(answer.lowercased().contains("connection: close"))
        }
    }

    @Test(arguments: [false, true])
    func aDeclaredOversizeBodyIsRefusedBeforeReading(tls: Bool) async throws {
        try await Self.withListener(tls: tls, limits: ConnectionLimits()) { listener in
            // Declares a gigabyte and sends one byte of it: answered at once, and the connection closed.
            let request =
                "POST /v1/push HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n"
                + "Authorization: Bearer \(listener.key)\r\nContent-Length: 1073741824\r\n\r\n{"
            let answer = try await Self.sendAndReadUntilClosed(try await Self.connect(listener), request)
            #expect(answer.hasPrefix("HTTP/1.1 413"))
            #expect(answer.lowercased().contains("connection: close"))
            #expect(answer.contains("PAYLOAD_TOO_LARGE"))
        }
    }

    @Test(arguments: [false, true])
    func anIdleKeepAliveConnectionIsClosed(tls: Bool) async throws {
        var limits = Self.short
        limits.headerTimeout = .seconds(10)
        // Long enough that a loaded machine (the whole suite in parallel) connects and sends within it: Hummingbird's
        // idle timer runs from the connection's start, and at 200 ms it sometimes closed the connection first.
        limits.idleTimeout = .seconds(3)
        try await Self.withListener(tls: tls, limits: limits) { listener in
            // One whole request answered, then nothing: Hummingbird's idle timeout closes the connection.
            let answer = try await Self.sendAndReadUntilClosed(
                try await Self.connect(listener), "GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(!answer.lowercased().contains("connection: close"))
        }
    }

    /// Sends a push request whose body (`{"messages":…}` behind `bodyLength` bytes in all of JSON whitespace) goes
    /// out `chunk` bytes every 100 ms (the input, not a synchronisation); returns what the relay answered once it
    /// closed the connection.
    static func sendBodySteadily(_ listener: Listener, bodyLength: Int, chunk: Int) async throws -> String {
        let json = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","title":"t","body":"b"}]}"#
        let body = Array(String(repeating: " ", count: bodyLength - json.utf8.count).utf8) + Array(json.utf8)
        let head =
            "POST /v1/push HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + "Authorization: Bearer \(listener.key)\r\nContent-Length: \(body.count)\r\n\r\n"
        return try await Self.connect(listener).executeThenClose { inbound, outbound in
            await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await outbound.write(ByteBuffer(string: head))
                    for start in stride(from: 0, to: body.count, by: chunk) {
                        try await Task.sleep(for: .milliseconds(100))
                        try await outbound.write(ByteBuffer(bytes: body[start..<min(start + chunk, body.count)]))
                    }
                }
                var received = ""
                do {
                    for try await buffer in inbound { received += String(buffer: buffer) }
                } catch {
                    // A TLS connection closed without close_notify ends in an error; the close is what is awaited.
                }
                // The relay closed the connection: a writer still trickling has nothing more to do.
                group.cancelAll()
                _ = try? await group.next()
                return received
            }
        }
    }

    @Test(arguments: [false, true])
    func aBodySentSteadilyAboveTheMinimumRateOutlivesTheBodyTimeout(tls: Bool) async throws {
        // 1,250 bytes at 250 bytes/s take 5 s, over two body timeouts of 2 s; 10 bytes/s is all it must keep up, so
        // only a client stalled for a whole 2 s period would be cut.
        var limits = Self.short
        limits.headerTimeout = .seconds(10)
        limits.bodyTimeout = .seconds(2)
        limits.bodyMinimumBytesPerSecond = 10
        try await Self.withListener(tls: tls, limits: limits) { listener in
            let answer = try await Self.sendBodySteadily(listener, bodyLength: 1_250, chunk: 25)
            #expect(answer.hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test(arguments: [false, true])
    func aBodyTrickledBelowTheMinimumRateIsCutOff(tls: Bool) async throws {
        // 50 bytes/s against 1,000 bytes/s required: cut at the first body timeout.
        var limits = Self.short
        limits.headerTimeout = .seconds(10)
        limits.bodyTimeout = .seconds(2)
        limits.bodyMinimumBytesPerSecond = 1_000
        try await Self.withListener(tls: tls, limits: limits) { listener in
            let answer = try await Self.sendBodySteadily(listener, bodyLength: 5_000, chunk: 5)
            #expect(answer.isEmpty)
        }
    }

    @Test(arguments: [false, true])
    func aLaterRequestTricklingItsHeadersOnAKeepAliveConnectionIsCutOff(tls: Bool) async throws {
        // An idle timeout beyond the test's time limit, so that only the header timeout can close the connection; a
        // header timeout that a loaded machine's handshake and first requests still fit in.
        var limits = Self.short
        limits.headerTimeout = .seconds(5)
        limits.idleTimeout = .seconds(600)
        try await Self.withListener(tls: tls, limits: limits) { listener in
            let health = "GET /healthz HTTP/1.1\r\nHost: relay\r\n\r\n"
            let answer = try await Self.connect(listener).executeThenClose { inbound, outbound in
                var iterator = inbound.makeAsyncIterator()
                // Two whole requests on the connection are served: keep-alive works.
                #expect(try await ConnectionCapTests.exchange(health, &iterator, outbound).hasPrefix("HTTP/1.1 200"))
                #expect(try await ConnectionCapTests.exchange(health, &iterator, outbound).hasPrefix("HTTP/1.1 200"))
                // The third never finishes its headers: its first bytes start the header timeout.
                try await outbound.write(ByteBuffer(string: Self.partialHeaders))
                var received = ""
                do {
                    while let buffer = try await iterator.next() { received += String(buffer: buffer) }
                } catch {
                    // A TLS connection closed without close_notify ends in an error; the close is what is awaited.
                }
                return received
            }
            #expect(answer.isEmpty)
        }
    }

    @Test func aClientThatNeverStartsItsTLSHandshakeIsCutOff() async throws {
        try await Self.withListener(tls: true) { listener in
            let raw = try await Self.connect(Listener(port: listener.port, caFile: nil))
            #expect(try await Self.sendAndReadUntilClosed(raw, "").isEmpty)
        }
    }

    @Test func anHTTP2HeaderBlockThatNeverEndsClosesTheConnectionAtTheHeaderTimeout() async throws {
        // An idle timeout beyond the test's time limit: only the header timeout can close the connection.
        var limits = Self.short
        limits.headerTimeout = .seconds(5)
        limits.idleTimeout = .seconds(600)
        try await Self.withListener(tls: true, limits: limits) { listener in
            let client = try await HTTP2TestClient.connect(port: listener.port, trusting: try #require(listener.caFile))
            #expect(try await client.request(method: "GET", path: "/healthz").status == 200)
            // HEADERS for stream 3 without END_HEADERS (":method: GET", static table), and no CONTINUATION after it.
            try await client.writeRawFrame(type: 0x1, flags: 0, streamID: 3, payload: [0x82])
            try await client.channel.closeFuture.get()
        }
    }

    @Test func anHTTP2StreamTricklingItsBodyIsReset() async throws {
        try await Self.withListener(tls: true) { listener in
            let client = try await HTTP2TestClient.connect(port: listener.port, trusting: try #require(listener.caFile))
            // With a good key the relay reads the body, and cuts the stream off when it does not come.
            await #expect(throws: NIOHTTP2Errors.StreamClosed.self) {
                _ = try await client.requestLeavingStreamOpen(
                    method: "POST", path: "/v1/push",
                    headers: [("authorization", "Bearer \(listener.key)"), ("content-type", "application/json")],
                    body: Array("{\"m".utf8))
            }
            await client.close()
        }
    }

    @Test func anHTTP2StreamAnsweredBeforeItsBodyEndsIsResetAfterItsAnswer() async throws {
        // A body timeout far beyond the test's time limit, so that the reset can only be the one after the answer.
        var limits = Self.short
        limits.headerTimeout = .seconds(10)
        limits.bodyTimeout = .seconds(600)
        try await Self.withListener(tls: true, limits: limits) { listener in
            let client = try await HTTP2TestClient.connect(port: listener.port, trusting: try #require(listener.caFile))
            // Without a key, the 401 comes at once, while the body has not ended: the client reads the whole answer
            // (a reset racing it would fail the request), then the reset.
            let (response, reset) = try await client.requestLeavingStreamOpen(
                method: "POST", path: "/v1/push", headers: [("content-type", "application/json")],
                body: Array("{\"m".utf8))
            #expect(response.status == 401)
            #expect(String(decoding: response.body, as: UTF8.self).contains("UNAUTHORIZED"))
            #expect(reset == .noError)
            // The connection goes on serving.
            #expect(try await client.request(method: "GET", path: "/healthz").status == 200)
            await client.close()
        }
    }
}
