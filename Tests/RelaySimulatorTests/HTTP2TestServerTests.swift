import Foundation
import HTTP2TestClient
import NIOCore
import NIOHTTP2
import Testing

@testable import RelaySimulator

@Suite struct HTTP2TestServerTests {
    // MARK: - Requests and responses

    @Test(.timeLimit(.minutes(1)))
    func requestReachesHandlerAndResponseReachesClient() async throws {
        let requests = Recorder<HTTP2TestRequest>()
        try await withServer { request in
            requests.append(request)
            return .respond(
                .json(
                    200,
                    #"{"ok":true}"#,
                    headers: [
                        (name: "apns-id", value: "EABC"),
                        (name: "Connection", value: "close"),  // must never reach an h2 client
                        (name: "X-Upper", value: "kept"),
                        (name: "content-length", value: "999"),  // the server computes its own
                    ]
                )
            )
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let response = try await client.request(
                method: "POST",
                path: "/3/device/abc123",
                headers: [("apns-topic", "com.example.app"), ("apns-push-type", "alert")],
                body: Array(#"{"aps":{"alert":"hi"}}"#.utf8)
            )
            await client.close()

            #expect(response.status == 200)
            #expect(response.bodyText == #"{"ok":true}"#)
            #expect(response.header("content-type") == "application/json")
            #expect(response.header("content-length") == "11")
            #expect(response.header("apns-id") == "EABC")
            #expect(response.header("x-upper") == "kept")
            #expect(response.header("connection") == nil)

            let request = try #require(requests.all.first)
            #expect(requests.all.count == 1)
            #expect(request.method == "POST")
            #expect(request.path == "/3/device/abc123")
            #expect(request.authority == "127.0.0.1:\(server.port)")
            #expect(request.header("APNS-Topic") == "com.example.app")
            #expect(request.header("apns-push-type") == "alert")
            #expect(request.bodyText == #"{"aps":{"alert":"hi"}}"#)
            #expect(request.connectionID == 1)
            #expect(request.streamID == 1)
            #expect(!request.headers.contains { $0.name.hasPrefix(":") })
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func emptyAndUntypedBodiesGetTheirContentHeaders() async throws {
        try await withServer { request in
            request.path == "/empty"
                ? .respond(HTTP2TestResponse(status: 204))
                : .respond(HTTP2TestResponse(status: 200, body: [1, 2, 3]))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let empty = try await client.request(method: "GET", path: "/empty")
            let bytes = try await client.request(method: "GET", path: "/bytes")
            await client.close()

            #expect(empty.status == 204)
            #expect(empty.body.isEmpty)
            #expect(empty.header("content-length") == "0")
            #expect(empty.header("content-type") == nil)
            #expect(bytes.body == [1, 2, 3])
            #expect(bytes.header("content-type") == "application/octet-stream")
            #expect(bytes.header("content-length") == "3")
        }
    }

    // MARK: - TLS

    @Test(.timeLimit(.minutes(1)))
    func caFileIsPEMAndVerifiesTheServer() async throws {
        try await withServer { _ in
            .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let pem = try String(contentsOfFile: server.caFilePath, encoding: .utf8)
            #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
            #expect(pem.contains("-----END CERTIFICATE-----"))
            #expect(pem == server.identity.certificatePEM)
            #expect(server.baseURL == "https://127.0.0.1:\(server.port)")

            // Verified against the 127.0.0.1 IP SAN (no SNI) and against the "localhost" DNS SAN.
            for serverHostname in [nil, "localhost"] {
                let client = try await HTTP2TestClient.connect(
                    port: server.port,
                    trusting: server.caFilePath,
                    serverHostname: serverHostname
                )
                #expect(try await client.negotiatedProtocol.get() == "h2")
                #expect(try await client.request(method: "GET").status == 200)
                await client.close()
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func clientTrustingAnotherCAIsRejected() async throws {
        let otherDirectory = try temporaryDirectory()
        let otherCA = try HTTP2TestIdentity.generate().write(to: otherDirectory)
        try await withServer { _ in
            .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            await #expect(throws: (any Error).self) {
                _ = try await HTTP2TestClient.connect(port: server.port, trusting: otherCA)
            }
            // The CA file written by the server still works, so the failure above is the verification.
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            await client.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func clientThatDoesNotNegotiateH2IsClosed() async throws {
        try await withServer { _ in
            .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            // The test client speaks HTTP/2 regardless, so only the server's ALPN check can stop this request.
            let client: HTTP2TestClient
            do {
                client = try await HTTP2TestClient.connect(
                    port: server.port,
                    trusting: server.caFilePath,
                    applicationProtocols: ["http/1.1"]
                )
            } catch {
                return  // Refused during the handshake: as good as closed.
            }
            #expect(try await client.negotiatedProtocol.get() != "h2")
            await #expect(throws: (any Error).self) { _ = try await client.request() }
            try await client.channel.closeFuture.get()
            #expect(server.statistics.streamsTotal == 0)
        }
    }

    // MARK: - Streams and statistics

    @Test(.timeLimit(.minutes(1)))
    func advertisedMaxConcurrentStreamsIsHonoured() async throws {
        let gate = Gate(count: 3)
        try await withServer(.init(maxConcurrentStreams: 3)) { _ in
            await gate.arrive()
            return .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let settings = try await client.remoteSettings.get()
            #expect(settings.first { $0.parameter == .maxConcurrentStreams }?.value == 3)

            // Six requests at once: the client keeps three open, the gate holds them until all three arrived.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await client.request(method: "GET").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            await client.close()

            #expect(statuses == Array(repeating: 200, count: 6))
            let statistics = server.statistics
            #expect(statistics.streamsTotal == 6)
            #expect(statistics.maxConcurrentStreamsSeen == 3)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func statisticsCountConnectionsAndConcurrentStreams() async throws {
        let gate = Gate(count: 4)
        try await withServer { _ in
            await gate.arrive()
            return .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let first = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let second = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            // Two streams on each connection, all four open at once (the gate opens at the fourth).
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in [first, second, first, second] {
                    group.addTask {
                        let response = try await client.request()
                        #expect(response.status == 200)
                    }
                }
                try await group.waitForAll()
            }

            let settled = try await server.waitForStatistics { $0.streamsInFlight == 0 }
            #expect(
                settled
                    == HTTP2TestServerStatistics(
                        connectionsAccepted: 2,
                        connectionsOpen: 2,
                        streamsTotal: 4,
                        streamsInFlight: 0,
                        maxConcurrentStreamsSeen: 2,
                        maxConcurrentStreamsTotal: 4,
                        goAwaysSent: 0,
                        resetsSent: 0
                    )
            )

            await first.close()
            await second.close()
            let closed = try await server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(closed.connectionsAccepted == 2)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func streamPeaksStartAgainAfterAReset() async throws {
        let four = Gate(count: 4)
        try await withServer { request in
            if request.path == "/wide" { await four.arrive() }
            return .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            // Four streams open at once, then the peaks start again and one stream at a time follows.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { _ = try await client.request(path: "/wide") } }
                try await group.waitForAll()
            }
            let wide = try await server.waitForStatistics { $0.streamsInFlight == 0 }
            #expect(wide.maxConcurrentStreamsSeen == 4)
            #expect(wide.maxConcurrentStreamsTotal == 4)

            server.resetMaxConcurrentStreamsSeen()
            #expect(server.statistics.maxConcurrentStreamsSeen == 0)
            for _ in 0..<3 { #expect(try await client.request(path: "/narrow").status == 200) }
            let narrow = try await server.waitForStatistics { $0.streamsInFlight == 0 }
            #expect(narrow.maxConcurrentStreamsSeen == 1)
            #expect(narrow.maxConcurrentStreamsTotal == 1)
            #expect(narrow.streamsTotal == 7, "only the peaks start again")
            await client.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func thousandsOfConcurrentStreamsAllGetTheirOwnAnswer() async throws {
        let connections = 4
        let requestsPerConnection = 500
        try await withServer(.init(maxConcurrentStreams: 1000)) { request in
            .respond(HTTP2TestResponse(status: 200, body: request.body))
        } body: { server in
            var clients: [HTTP2TestClient] = []
            for _ in 0..<connections {
                let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
                _ = try await client.remoteSettings.get()  // Let the client learn the stream limit first.
                clients.append(client)
            }
            let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
                for (index, client) in clients.enumerated() {
                    for request in 0..<requestsPerConnection {
                        group.addTask {
                            let body = Array("\(index)-\(request)".utf8)
                            let response = try await client.request(body: body)
                            return response.status == 200 && response.body == body ? 0 : 1
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            for client in clients {
                await client.close()
            }

            #expect(mismatches == 0)
            let statistics = try await server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(statistics.streamsTotal == connections * requestsPerConnection)
            #expect(statistics.connectionsAccepted == connections)
            #expect(statistics.streamsInFlight == 0)
            #expect(statistics.maxConcurrentStreamsSeen <= 1000)
        }
    }

    // MARK: - Scripted faults

    @Test(.timeLimit(.minutes(1)))
    func resetStreamSurfacesAsStreamErrorAndKeepsTheConnection() async throws {
        try await withServer { request in
            request.path == "/reset" ? .resetStream(code: .internalError) : .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let error = await #expect(throws: NIOHTTP2Errors.StreamClosed.self) {
                _ = try await client.request(path: "/reset")
            }
            #expect(error?.errorCode == .internalError)
            #expect(try await client.request(path: "/ok").status == 200)
            await client.close()

            let statistics = server.statistics
            #expect(statistics.resetsSent == 1)
            #expect(statistics.connectionsAccepted == 1)
            #expect(statistics.goAwaysSent == 0)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func goAwayAnswersThisStreamRefusesLaterOnesAndClosesTheConnection() async throws {
        let bothArrived = Gate(count: 2)
        let goAwaySeen = Gate(count: 2)
        let handled = Recorder<String>()
        try await withServer { request in
            handled.append(request.path)
            await bothArrived.arrive()
            if request.path == "/first" {
                return .goAway(thenRespond: HTTP2TestResponse(status: 200))
            }
            await goAwaySeen.arrive()  // Answer only after the GOAWAY refused this stream.
            return .respond(HTTP2TestResponse(status: 201))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let first = Task { try await client.request(path: "/first") }
            defer { first.cancel() }
            try await server.waitForStatistics { $0.streamsTotal == 1 }  // "/first" is stream 1.
            let second = Task { try await client.request(path: "/second") }
            defer { second.cancel() }

            let goAway = try await client.goAway.get()
            #expect(goAway == .init(lastStreamID: 1, errorCode: .noError))
            await goAwaySeen.arrive()

            #expect(try await first.value.status == 200)
            await #expect(throws: (any Error).self) { _ = try await second.value }
            try await client.channel.closeFuture.get()  // The server closes once stream 1 is done.
            await #expect(throws: (any Error).self) { _ = try await client.request(path: "/third") }

            let statistics = try await server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(statistics.goAwaysSent == 1)
            #expect(statistics.streamsTotal == 2)
            #expect(handled.all == ["/first", "/second"])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func goAwayWithoutResponseRefusesTheStream() async throws {
        try await withServer { _ in
            .goAway(thenRespond: nil)
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let error = await #expect(throws: NIOHTTP2Errors.StreamClosed.self) {
                _ = try await client.request()
            }
            #expect(error?.errorCode == .refusedStream)
            let goAway = try await client.goAway.get()
            #expect(goAway == .init(lastStreamID: 1, errorCode: .noError))
            try await client.channel.closeFuture.get()

            let statistics = try await server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(statistics.goAwaysSent == 1)
            #expect(statistics.resetsSent == 1)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func goAwayEveryStreamsMakesTheClientReconnect() async throws {
        try await withServer(.init(goAwayEveryStreams: 2)) { request in
            .respond(.json(200, #"{"connection":\#(request.connectionID),"stream":\#(request.streamID)}"#))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            #expect(try await client.request().bodyText == #"{"connection":1,"stream":1}"#)
            // The second stream is the last one: GOAWAY names it, and it still gets its answer.
            #expect(try await client.request().bodyText == #"{"connection":1,"stream":3}"#)
            let goAway = try await client.goAway.get()
            #expect(goAway == .init(lastStreamID: 3, errorCode: .noError))
            try await client.channel.closeFuture.get()

            let next = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            #expect(try await next.request().bodyText == #"{"connection":2,"stream":1}"#)
            await next.close()

            let statistics = server.statistics
            #expect(statistics.goAwaysSent == 1)
            #expect(statistics.connectionsAccepted == 2)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func goAwayAllConnectionsNamesEachConnectionsHighestStream() async throws {
        try await withServer { _ in
            .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let first = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let second = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            _ = try await first.request()
            _ = try await second.request()
            _ = try await second.request()

            server.goAwayAllConnections()

            let firstGoAway = try await first.goAway.get()
            #expect(firstGoAway == .init(lastStreamID: 1, errorCode: .noError))
            let secondGoAway = try await second.goAway.get()
            #expect(secondGoAway == .init(lastStreamID: 3, errorCode: .noError))
            // Idle connections close right after their GOAWAY.
            try await first.channel.closeFuture.get()
            try await second.channel.closeFuture.get()
            let statistics = try await server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(statistics.goAwaysSent == 2)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func dropConnectionClosesWithoutGoAway() async throws {
        try await withServer { request in
            request.path == "/drop" ? .dropConnection : .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            #expect(try await client.request().status == 200)
            await #expect(throws: (any Error).self) { _ = try await client.request(path: "/drop") }
            try await client.channel.closeFuture.get()
            await #expect(throws: HTTP2TestClient.ClientError.self) { _ = try await client.goAway.get() }

            let statistics = try await server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(statistics.goAwaysSent == 0)
            #expect(statistics.resetsSent == 0)
            #expect(statistics.streamsInFlight == 0)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func dropAllConnectionsClosesEveryConnection() async throws {
        try await withServer { _ in
            .respond(HTTP2TestResponse(status: 200))
        } body: { server in
            let clients = [
                try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath),
                try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath),
            ]
            for client in clients {
                #expect(try await client.request().status == 200)
            }

            server.dropAllConnections()

            for client in clients {
                try await client.channel.closeFuture.get()
                await #expect(throws: HTTP2TestClient.ClientError.self) { _ = try await client.goAway.get() }
            }
            let statistics = try await server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(statistics.connectionsAccepted == 2)
            #expect(statistics.goAwaysSent == 0)

            let again = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            #expect(try await again.request().status == 200)
            await again.close()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func delayedResponseDoesNotHoldOtherStreams() async throws {
        // The slow answer is far away; the fast one on the same connection must not wait for it.
        try await withServer { request in
            .respond(
                HTTP2TestResponse(status: 200, body: Array(request.path.utf8)),
                delay: request.path == "/slow" ? .seconds(30) : .zero)
        } body: { server in
            let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
            let finished = Recorder<String>()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    let response = try? await client.request(path: "/slow")
                    if let response { finished.append(response.bodyText) }
                }
                try await server.waitForStatistics { $0.streamsTotal == 1 }
                let fast = try await client.request(path: "/fast")
                finished.append(fast.bodyText)
                #expect(finished.all == ["/fast"], "the fast stream finished while the slow one was still waiting")
                group.cancelAll()
                await client.close()
            }
        }
    }

    // MARK: - Lifecycle

    @Test(.timeLimit(.minutes(1)))
    func restartOnTheSamePortKeepsTheCA() async throws {
        let first = try await HTTP2TestServer.start { _ in .respond(.json(200, #""first""#)) }
        let configuration = first.configuration
        let client = try await HTTP2TestClient.connect(port: first.port, trusting: first.caFilePath)
        #expect(try await client.request().bodyText == #""first""#)
        let caPEM = try String(contentsOfFile: first.caFilePath, encoding: .utf8)

        try await first.shutdown()
        try await client.channel.closeFuture.get()

        let second = try await HTTP2TestServer.start(configuration: configuration) { _ in
            .respond(.json(200, #""second""#))
        }
        do {
            #expect(second.port == first.port)
            #expect(second.caFilePath == first.caFilePath)
            #expect(try String(contentsOfFile: second.caFilePath, encoding: .utf8) == caPEM)
            // A client that kept the old CA file path (as a curl pool keeps CURLOPT_CAINFO) connects again.
            let reconnected = try await HTTP2TestClient.connect(port: configuration.port, trusting: first.caFilePath)
            #expect(try await reconnected.request().bodyText == #""second""#)
            await reconnected.close()
        } catch {
            try? await second.shutdown()
            throw error
        }
        try await second.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func anIdentityStartsAServerTheSameCATrusts() async throws {
        let directory = try temporaryDirectory()
        try await withServer { _ in
            .respond(HTTP2TestResponse(status: 200))
        } body: { first in
            let second = try await HTTP2TestServer.start(
                configuration: .init(certificateDirectory: directory),
                identity: first.identity
            ) { _ in .respond(HTTP2TestResponse(status: 202)) }
            do {
                #expect(second.caFilePath == directory + "/ca.pem")
                let client = try await HTTP2TestClient.connect(port: second.port, trusting: first.caFilePath)
                #expect(try await client.request().status == 202)
                await client.close()
            } catch {
                try? await second.shutdown()
                throw error
            }
            try await second.shutdown()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func shutdownClosesConnectionsCancelsHandlersAndStopsListening() async throws {
        let server = try await HTTP2TestServer.start { request in
            if request.path == "/stuck" {
                try? await Task.sleep(for: .seconds(3600))  // Ends only when shutdown cancels it.
            }
            return .respond(HTTP2TestResponse(status: 200))
        }
        let client = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
        let stuck = Task { try await client.request(path: "/stuck") }
        try await server.waitForStatistics { $0.streamsInFlight == 1 }

        try await server.shutdown()

        try await client.channel.closeFuture.get()
        await #expect(throws: (any Error).self) { _ = try await stuck.value }
        await #expect(throws: (any Error).self) {
            _ = try await HTTP2TestClient.connect(port: server.port, trusting: server.caFilePath)
        }
        try await server.shutdown()  // A second call is harmless.
    }

    @Test func invalidConfigurationIsRejected() async {
        await #expect(throws: HTTP2TestServerError.invalidConfiguration) {
            _ = try await HTTP2TestServer.start(configuration: .init(goAwayEveryStreams: 0)) { _ in .dropConnection }
        }
    }
}

/// Runs `body` against a started server and always shuts the server down (shared by this target's suites).
func withServer(
    _ configuration: HTTP2TestServer.Configuration = .init(),
    handler: @escaping @Sendable (HTTP2TestRequest) async -> HTTP2TestAction,
    body: (HTTP2TestServer) async throws -> Void
) async throws {
    let server = try await HTTP2TestServer.start(configuration: configuration, handler: handler)
    do {
        try await body(server)
    } catch {
        try? await server.shutdown()
        throw error
    }
    try await server.shutdown()
}

func temporaryDirectory() throws -> String {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("relay-simulator-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url.path
}
