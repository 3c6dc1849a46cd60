import Foundation
import HTTP2TestClient
import NIOCore
import NIOPosix
import Testing

@testable import RelaySimulator

@Suite(.timeLimit(.minutes(1)))
struct HTTP2TestConnectProxyTests {
    @Test func tunnelCarriesHTTP2OverTLSToTheServer() async throws {
        try await withProxyAndServer { proxy, server in
            #expect(proxy.url == "http://127.0.0.1:\(proxy.port)")
            let client = try await HTTP2TestClient.connect(
                port: server.port,
                trusting: server.caFilePath,
                through: .init(port: proxy.port)
            )
            #expect(try await client.negotiatedProtocol.get() == "h2")
            let response = try await client.request(path: "/3/device/abc", body: Array("hello".utf8))
            #expect(response.status == 200)
            #expect(response.bodyText == "hello")
            #expect(
                proxy.statistics == .init(tunnelsOpened: 1, tunnelsRefused: 0, lastTarget: "127.0.0.1:\(server.port)")
            )
            #expect(server.statistics.connectionsAccepted == 1)

            // The server closing its side closes the client's side of the tunnel too.
            server.dropAllConnections()
            try await client.channel.closeFuture.get()
        }
    }

    @Test func clientClosingTheTunnelClosesTheServerSide() async throws {
        try await withProxyAndServer { proxy, server in
            let client = try await HTTP2TestClient.connect(
                port: server.port,
                trusting: server.caFilePath,
                through: .init(port: proxy.port)
            )
            #expect(try await client.request().status == 200)
            await client.close()
            try await server.waitForStatistics { $0.connectionsOpen == 0 }
        }
    }

    @Test func requiredCredentialsAreChecked() async throws {
        let authorization = "Basic " + Data("relay:s3cret:with-colon".utf8).base64EncodedString()
        try await withProxyAndServer(credentials: (user: "relay", password: "s3cret:with-colon")) { proxy, server in
            for wrong in [nil, "Basic " + Data("relay:nope".utf8).base64EncodedString(), "Bearer abc"] {
                let error = await #expect(throws: HTTP2TestClient.ClientError.self) {
                    _ = try await HTTP2TestClient.connect(
                        port: server.port,
                        trusting: server.caFilePath,
                        through: .init(port: proxy.port, authorization: wrong)
                    )
                }
                guard case .proxyRefused(let status) = error else {
                    Issue.record("expected a refusal, got \(String(describing: error))")
                    continue
                }
                #expect(status == 407)
            }
            #expect(server.statistics.connectionsAccepted == 0, "no refused request reached the server")

            // The scheme is case-insensitive.
            for accepted in [authorization, authorization.replacingOccurrences(of: "Basic", with: "basic")] {
                let client = try await HTTP2TestClient.connect(
                    port: server.port,
                    trusting: server.caFilePath,
                    through: .init(port: proxy.port, authorization: accepted)
                )
                #expect(try await client.request().status == 200)
                await client.close()
            }
            #expect(
                proxy.statistics == .init(tunnelsOpened: 2, tunnelsRefused: 3, lastTarget: "127.0.0.1:\(server.port)")
            )
        }
    }

    @Test func requiredCredentialsAnswer407WithAChallenge() async throws {
        try await withProxyAndServer(credentials: (user: "relay", password: "secret")) { proxy, server in
            let answer = try await exchange(
                port: proxy.port,
                "CONNECT 127.0.0.1:\(server.port) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n"
            )
            #expect(answer.hasPrefix("HTTP/1.1 407 "))
            #expect(answer.contains("Proxy-Authenticate: Basic"))
        }
    }

    @Test func methodsOtherThanConnectGet405() async throws {
        try await withProxyAndServer { proxy, server in
            let answer = try await exchange(
                port: proxy.port,
                "GET http://127.0.0.1:\(server.port)/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            )
            #expect(answer.hasPrefix("HTTP/1.1 405 "))
            #expect(proxy.statistics == .init(tunnelsOpened: 0, tunnelsRefused: 1, lastTarget: nil))
        }
    }

    @Test func unreachableTargetGets502() async throws {
        // A port that was just bound and released: nothing listens there.
        let closed = try await HTTP2TestConnectProxy.start()
        let closedPort = closed.port
        try await closed.shutdown()
        try await withProxyAndServer { proxy, _ in
            let answer = try await exchange(port: proxy.port, "CONNECT 127.0.0.1:\(closedPort) HTTP/1.1\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 502 "))
            #expect(proxy.statistics.tunnelsRefused == 1)
            #expect(proxy.statistics.lastTarget == "127.0.0.1:\(closedPort)")
        }
    }

    @Test(arguments: [
        ("127.0.0.1:443", "127.0.0.1", 443),
        ("[::1]:8443", "::1", 8443),
        ("api.push.apple.com:443", "api.push.apple.com", 443),
    ])
    func authoritiesAreSplit(authority: String, host: String, port: Int) throws {
        let split = try #require(ConnectRequestHandler.splitAuthority(authority))
        #expect(split.host == host)
        #expect(split.port == port)
    }

    @Test(arguments: ["127.0.0.1", "127.0.0.1:", ":443", "[::1]", "[::1]443", "host:70000", "host:0"])
    func malformedAuthoritiesAreRejected(authority: String) {
        #expect(ConnectRequestHandler.splitAuthority(authority) == nil)
    }

    @Test(arguments: ["", "f", "fo", "foo", "foob", "fooba", "foobar", "relay:s3cret:with-colon", "ü€"])
    func base64MatchesFoundation(text: String) {
        #expect(base64(text) == Data(text.utf8).base64EncodedString())
    }
}

/// Runs `body` with a started proxy and server and always shuts both down.
private func withProxyAndServer(
    credentials: (user: String, password: String)? = nil,
    body: (HTTP2TestConnectProxy, HTTP2TestServer) async throws -> Void
) async throws {
    let server = try await HTTP2TestServer.start { request in
        .respond(HTTP2TestResponse(status: 200, body: request.body))
    }
    let proxy: HTTP2TestConnectProxy
    do {
        proxy = try await HTTP2TestConnectProxy.start(requiredCredentials: credentials)
    } catch {
        try? await server.shutdown()
        throw error
    }
    do {
        try await body(proxy, server)
    } catch {
        try? await proxy.shutdown()
        try? await server.shutdown()
        throw error
    }
    try await proxy.shutdown()
    try await server.shutdown()
}

/// Sends `request` on a new plain TCP connection to `127.0.0.1:port` and returns everything read until the peer
/// closes.
private func exchange(port: Int, _ request: String) async throws -> String {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
            }
        }
    return try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: request))
        var answer = ""
        for try await chunk in inbound {
            answer += String(buffer: chunk)
        }
        return answer
    }
}
