import Foundation
import RelaySimulator
import Testing

@testable import RelayHTTP2

/// The pool's TLS refusals against the loopback server, on both backends: a certificate for another host name, a
/// certificate from a CA the pool does not trust, and a server that does not offer h2 in ALPN. Each request fails
/// with a typed error, and the server never gets a request (no HTTP/1.1 fallback).
@Suite(.timeLimit(.minutes(1)))
struct HTTP2PoolTLSTests {
    /// The server's certificate covers `127.0.0.1`, `::1`, `localhost` and its bind address `0.0.0.0`; reaching it
    /// as `127.0.0.2` (still the loopback interface on Linux) is reaching a host the certificate does not name.
    @Test(arguments: HTTP2Backend.allCases)
    func aHostNameTheCertificateDoesNotCoverIsRefused(backend: HTTP2Backend) async throws {
        let server = try await HTTP2TestServer.start(
            configuration: .init(host: "0.0.0.0"), handler: HTTP2PoolTests.echo)
        let pool = try HTTP2PoolTests.pool(for: server, backend: backend)
        var request = HTTP2PoolTests.request(server, 1)
        request.url = "https://127.0.0.2:\(server.port)/3/device/test"
        let error = await LiveTransport.failure(pool, request)
        #expect(error?.kind == .tls, "\(String(describing: error))")
        #expect(server.statistics.connectionsAccepted == 1, "the TCP connection was made; TLS refused the name")
        #expect(server.statistics.streamsTotal == 0)
        // The same server reached by a name its certificate covers is fine.
        let good = try HTTP2PoolTests.pool(for: server, backend: backend)
        #expect(try await good.send(HTTP2PoolTests.request(server, 2)).status == 200)
        await good.shutdown()
        await pool.shutdown()
        try await server.shutdown()
    }

    @Test(arguments: HTTP2Backend.allCases)
    func aCertificateFromAnUntrustedCAIsRefused(backend: HTTP2Backend) async throws {
        let server = try await HTTP2TestServer.start(handler: HTTP2PoolTests.echo)
        let otherDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("pushrelay-other-ca-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: otherDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: otherDirectory) }
        let otherCA = try HTTP2TestIdentity.generate().write(to: otherDirectory)

        // Only the system's trust store, then another CA: neither issued the server's certificate.
        for caFile in [nil, otherCA] {
            let pool = try HTTP2Pool(configuration: .init(backend: backend, caFile: caFile))
            let error = await LiveTransport.failure(pool, HTTP2PoolTests.request(server, 1))
            #expect(error?.kind == .tls, "caFile \(caFile ?? "none"): \(String(describing: error))")
            await pool.shutdown()
        }
        #expect(server.statistics.streamsTotal == 0)
        try await server.shutdown()
    }

    /// A server that offers only `http/1.1` in ALPN is refused: HTTP/2 is required, and nothing is sent to it.
    @Test(arguments: HTTP2Backend.allCases)
    func aServerWithoutH2InALPNIsRefused(backend: HTTP2Backend) async throws {
        let server = try await HTTP2TestServer.start(
            configuration: .init(alpnProtocols: ["http/1.1"]),
            handler: HTTP2PoolTests.echo
        )
        let pool = try HTTP2PoolTests.pool(for: server, backend: backend)
        let error = await LiveTransport.failure(pool, HTTP2PoolTests.request(server, 1))
        switch backend {
        case .nghttp2:
            #expect(error?.kind == .notHTTP2, "\(String(describing: error))")
        case .curl:
            // libcurl offers only h2 and speaks nothing else (prior knowledge), but does not say what ALPN chose:
            // the server closing on a connection without h2 is all it sees.
            #expect(error?.kind == .connectionLost || error?.kind == .notHTTP2, "\(String(describing: error))")
        }
        #expect(server.statistics.streamsTotal == 0)
        await pool.shutdown()
        try await server.shutdown()
    }
}
