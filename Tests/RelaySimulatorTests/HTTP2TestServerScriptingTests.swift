import HTTP2TestClient
import NIOCore
import NIOHTTP2
import Testing

@testable import RelaySimulator

/// The connection-level scripting of ``HTTP2TestServer``: frame counters, flow-control window, ALPN, early answers,
/// stream-limit changes and stalled connections, each checked from an independent NIO client.
@Suite(.timeLimit(.minutes(1)))
struct HTTP2TestServerScriptingTests {
    /// How long a test waits for an answer that must not come. Only a negative is waited for this way; everything
    /// that must happen is awaited on its own event.
    private static let silence: Duration = .milliseconds(500)

    // MARK: - Frame counters

    @Test func clientResetsAndPingsAreCounted() async throws {
        try await withServer { request in
            .respond(HTTP2TestResponse(status: 200, body: Array(String(request.streamID).utf8)))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            // Stream 1: reset by the client before any answer.
            try await client.openAndReset()
            // Stream 3: answered completely, then reset anyway, as libcurl 7.88.1 does.
            let answered = try await client.request()
            #expect(answered.bodyText == "3")
            try await client.writeRawReset(streamID: 3, code: .cancel)
            // An unsolicited PING ACK is not a PING.
            try await client.writeRawFrame(type: 0x6, flags: 0x1, streamID: 0, payload: Array(repeating: 7, count: 8))
            // The server reads frames in order, so once this PING is acknowledged everything above was counted.
            #expect(try await client.ping(timeout: .seconds(30)))

            let statistics = server.statistics
            #expect(statistics.resetsReceived == 2)
            #expect(statistics.resetsReceivedAfterResponse == 1)
            #expect(statistics.pingsReceived == 1)
            #expect(statistics.resetsSent == 0)
            // None of it cost the connection.
            #expect(try await client.request().bodyText == "5")
            await client.close()
            #expect(server.statistics.connectionsAccepted == 1)
        }
    }

    @Test func serverResetsAreNotMistakenForAnswers() async throws {
        try await withServer { request in
            request.path == "/reset" ? .resetStream(code: .refusedStream) : .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            await #expect(throws: NIOHTTP2Errors.StreamClosed.self) { _ = try await client.request(path: "/reset") }
            // A client's RST_STREAM on the stream the server reset (crossing frames) is not after a response.
            try await client.writeRawReset(streamID: 1, code: .cancel)
            #expect(try await client.ping(timeout: .seconds(30)))
            await client.close()

            let statistics = server.statistics
            #expect(statistics.resetsSent == 1)
            #expect(statistics.resetsReceived == 1)
            #expect(statistics.resetsReceivedAfterResponse == 0)
        }
    }

    // MARK: - Flow control

    @Test func smallInitialWindowIsAdvertisedAndBodiesStillFlow() async throws {
        let body = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try await withServer(.init(initialWindowSize: 1024)) { request in
            .respond(HTTP2TestResponse(status: 200, body: request.body))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let settings = try await client.remoteSettings.get()
            #expect(settings.first { $0.parameter == .initialWindowSize }?.value == 1024)

            // Twenty windows' worth on two streams at once: only WINDOW_UPDATEs let these bodies through.
            async let first = client.request(body: body)
            async let second = client.request(body: Array(body.reversed()))
            #expect(try await first.body == body)
            #expect(try await second.body == Array(body.reversed()))
            await client.close()
        }
    }

    @Test func defaultWindowIsOneMebibyte() async throws {
        try await withServer { _ in
            .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let settings = try await client.remoteSettings.get()
            #expect(settings.first { $0.parameter == .initialWindowSize }?.value == 1 << 20)
            await client.close()
        }
    }

    @Test(arguments: [0, Int(Int32.max) + 1])
    func windowOutsideTheProtocolsRangeIsRejected(size: Int) async {
        await #expect(throws: HTTP2TestServerError.invalidConfiguration) {
            _ = try await HTTP2TestServer.start(configuration: .init(initialWindowSize: size)) { _ in .dropConnection }
        }
    }

    // MARK: - ALPN

    @Test func serverWithoutH2ClosesTheConnectionAfterTheHandshake() async throws {
        try await withServer(.init(alpnProtocols: ["http/1.1"])) { _ in
            .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let client = try await HTTP2TestClient.connect(
                port: server.port,
                trusting: server.caFilePath,
                applicationProtocols: ["h2", "http/1.1"]
            )
            #expect(try await client.negotiatedProtocol.get() == "http/1.1")
            try await client.channel.closeFuture.get()

            // A client that offers only h2 finds nothing in common: refused in the handshake, or closed after it.
            do {
                let h2Only = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
                #expect(try await h2Only.negotiatedProtocol.get() == nil)
                try await h2Only.channel.closeFuture.get()
            } catch {
                // Refused during the handshake.
            }
            let statistics = try await server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(statistics.streamsTotal == 0)
        }
    }

    // MARK: - Early answers

    @Test func answerBeforeBodyRespondsAtHeadersThenResetsWithNoError() async throws {
        let bodies = Recorder<[UInt8]>()
        try await withServer(.init(answerBeforeBody: true)) { request in
            bodies.append(request.body)
            return .respond(.json(413, #"{"reason":"PayloadTooLarge"}"#))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)

            // A request that ended with its HEADERS: the response closes the stream, so no RST_STREAM may follow.
            let ended = try await client.request(method: "GET", path: "/ended")
            #expect(ended.status == 413)

            // A request whose body is still open: the answer comes anyway, then RST_STREAM(NO_ERROR).
            let (response, reset) = try await client.requestLeavingStreamOpen(body: Array(repeating: 1, count: 4096))
            #expect(response.status == 413)
            #expect(response.bodyText == #"{"reason":"PayloadTooLarge"}"#)
            #expect(reset == .noError)

            #expect(bodies.all == [[], []], "the handler ran at HEADERS, without the body")
            #expect(server.statistics.resetsSent == 1)
            // The connection is fine afterwards.
            #expect(try await client.request(method: "GET").status == 413)
            await client.close()
        }
    }

    // MARK: - Stream limit changes

    @Test func loweredStreamLimitReachesOpenAndLaterConnectionsWithoutKillingOpenStreams() async throws {
        // Three handlers wait here; the test is the fourth arrival and opens the gate.
        let gate = Gate(count: 4)
        try await withServer { _ in
            await gate.arrive()
            return .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            var settings = client.settingsFrames.makeAsyncIterator()
            let initial = await settings.next()
            #expect(initial?.first { $0.parameter == .maxConcurrentStreams }?.value == 100)

            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<3 {
                    group.addTask { try await client.request().status }
                }
                try await server.waitForStatistics { $0.streamsInFlight == 3 }

                server.setMaxConcurrentStreams(1)

                // NIO's client acknowledges the SETTINGS as it reads them; its three streams stay open, over the limit.
                let changed = await settings.next()
                #expect(changed?.first { $0.parameter == .maxConcurrentStreams }?.value == 1)
                #expect(try await server.waitForStatistics { $0.settingsChangesSent == 1 }.settingsChangesSent == 1)
                #expect(try await client.ping(timeout: .seconds(30)), "the SETTINGS ACK went out before this PING")
                await gate.arrive()
                let statuses = try await group.reduce(into: []) { $0.append($1) }
                #expect(statuses == [200, 200, 200])
            }

            // Within the new limit the connection keeps working: two requests, one stream at a time.
            async let first = client.request()
            async let second = client.request()
            #expect(try await [first.status, second.status] == [200, 200])
            let statistics = server.statistics
            #expect(statistics.goAwaysSent == 0)
            #expect(statistics.connectionsOpen == 1)
            #expect(statistics.streamsTotal == 5)

            // A connection accepted later starts with the new limit and is not counted as a change.
            let later = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let laterSettings = try await later.remoteSettings.get()
            #expect(laterSettings.first { $0.parameter == .maxConcurrentStreams }?.value == 1)
            #expect(try await later.request().status == 200)
            await later.close()
            await client.close()
            #expect(server.statistics.settingsChangesSent == 1)
        }
    }

    // MARK: - Stalled connections

    @Test func stallConnectionActionSilencesOnlyThatConnectionUntilShutdown() async throws {
        let server = try await HTTP2TestServer.start { request in
            request.path == "/stall" ? .stallConnection : .respond(HTTP2TestResponse(status: 200))
        }
        do {
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            #expect(try await client.request().status == 200)
            #expect(try await client.ping(timeout: .seconds(30)), "a live connection acknowledges PING")

            let stalled = Task { try await client.request(path: "/stall") }
            defer { stalled.cancel() }
            try await server.waitForStatistics { $0.connectionsStalled == 1 }

            #expect(try await client.ping(timeout: Self.silence) == false)
            let statistics = server.statistics
            #expect(statistics.pingsReceived == 1, "a stalled connection reads nothing")
            #expect(statistics.connectionsOpen == 1)

            // Other connections are not affected.
            let other = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            #expect(try await other.request().status == 200)
            #expect(try await other.ping(timeout: .seconds(30)))

            try await server.shutdown()
            try await client.channel.closeFuture.get()
            try await other.channel.closeFuture.get()
            await #expect(throws: (any Error).self) { _ = try await stalled.value }
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    @Test func stallAllConnectionsSilencesEveryOpenConnectionButNotLaterOnes() async throws {
        let server = try await HTTP2TestServer.start { _ in .respond(HTTP2TestResponse(status: 200)) }
        do {
            let clients = [
                try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath),
                try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath),
            ]
            for client in clients {
                #expect(try await client.request().status == 200)
            }

            server.stallAllConnections()
            try await server.waitForStatistics { $0.connectionsStalled == 2 }

            let later = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            #expect(try await later.request().status == 200)
            #expect(server.statistics.connectionsOpen == 3)

            // Scripted GOAWAYs and setting changes reach the later connection, not the stalled ones.
            server.setMaxConcurrentStreams(10)
            server.goAwayAllConnections()
            #expect(try await later.goAway.get() == .init(lastStreamID: 1, errorCode: .noError))
            async let firstPing = clients[0].ping(timeout: Self.silence)
            async let secondPing = clients[1].ping(timeout: Self.silence)
            #expect(try await [firstPing, secondPing] == [false, false])
            let statistics = server.statistics
            #expect(statistics.goAwaysSent == 1, "only the later connection got one")
            #expect(statistics.settingsChangesSent == 1, "only the later connection got one")

            try await server.shutdown()
            for client in clients + [later] {
                try await client.channel.closeFuture.get()
            }
            #expect(server.statistics.connectionsOpen == 0)
        } catch {
            try? await server.shutdown()
            throw error
        }
    }

    @Test func droppingAStalledConnectionClosesIt() async throws {
        try await withServer { _ in
            .stallConnection
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let stalled = Task { try await client.request() }
            defer { stalled.cancel() }
            try await server.waitForStatistics { $0.connectionsStalled == 1 }
            server.dropAllConnections()
            try await client.channel.closeFuture.get()
            await #expect(throws: (any Error).self) { _ = try await stalled.value }
            try await server.waitForStatistics { $0.connectionsOpen == 0 }
        }
    }
}
