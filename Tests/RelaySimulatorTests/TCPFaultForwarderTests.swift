import HTTP2TestClient
import NIOCore
import Testing

@testable import RelaySimulator

@Suite(.timeLimit(.minutes(1)))
struct TCPFaultForwarderTests {
    /// Up, cut, held, restored: HTTP/2 over TLS to a test server through the forwarder, as a PostgreSQL client's
    /// connection would go.
    @Test func forwardsCutsHoldsAndRestores() async throws {
        let server = try await HTTP2TestServer.start { request in
            .respond(HTTP2TestResponse(status: 200, body: request.body))
        }
        let forwarder = try await TCPFaultForwarder.start(targetHost: "127.0.0.1", targetPort: server.port)
        do {
            let client = try await HTTP2TestClient.connect(port: forwarder.port, trusting: server.caFilePath)
            let response = try await client.request(path: "/3/device/abc", body: Array("hello".utf8))
            #expect(response.status == 200)
            #expect(response.bodyText == "hello")

            // A cut closes the forwarded connection, both sides.
            forwarder.cut()
            try await client.channel.closeFuture.get()
            try await server.waitForStatistics { $0.connectionsOpen == 0 }

            // While cut, a new connection is accepted and never answered: its TLS handshake waits.
            async let held = HTTP2TestClient.connect(port: forwarder.port, trusting: server.caFilePath)
            while forwarder.statistics.held == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(200))
            #expect(server.statistics.connectionsAccepted == 1)

            // Restored: the held connection is closed (its handshake fails), and new ones are forwarded again.
            forwarder.restore()
            do {
                _ = try await held
                Issue.record("a connection held while cut completed its TLS handshake")
            } catch {}
            let again = try await HTTP2TestClient.connect(port: forwarder.port, trusting: server.caFilePath)
            #expect(try await again.request().status == 200)
            #expect(forwarder.statistics == .init(forwarded: 2, cut: 1, held: 1, failed: 0))
            await again.close()
        } catch {
            try? await forwarder.shutdown()
            try? await server.shutdown()
            throw error
        }
        try await forwarder.shutdown()
        try await server.shutdown()
    }
}
