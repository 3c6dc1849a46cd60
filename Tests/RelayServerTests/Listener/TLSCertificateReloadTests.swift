import Foundation
import Hummingbird
import RelayHTTP2
import RelaySimulator
import ServiceLifecycle
import Testing

@testable import RelayServer

/// `SIGHUP` reloads the listener's certificate and key: connections opened afterwards get the new pair, and a pair
/// that does not load leaves the old one serving.
@Suite(.timeLimit(.minutes(1)))
struct TLSCertificateReloadTests {
    @Test func aReloadedCertificateServesNewConnectionsAndABadOneIsRefused() async throws {
        let relay = try await TestRelay()
        let (first, second) = (try HTTP2TestIdentity.generate(), try HTTP2TestIdentity.generate())
        let (leafA, leafB) = (
            try first.issueServerCertificate(host: "127.0.0.1"), try second.issueServerCertificate(host: "127.0.0.1")
        )
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relay-reload-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let caA = try first.write(to: directory + "/a")
        let caB = try second.write(to: directory + "/b")
        let (certFile, keyFile) = (directory + "/relay.crt", directory + "/relay.key")
        try leafA.certificatePEM.write(toFile: certFile, atomically: true, encoding: .utf8)
        try leafA.privateKeyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let certificates = try TLSCertificates(
            certificateChain: leafA.certificatePEM, privateKey: leafA.privateKeyPEM, files: (certFile, keyFile))

        let ports = AsyncStream.makeStream(of: Int.self)
        let app = try buildApplication(
            RelayApplicationParts(
                relay: relay.relay, host: "127.0.0.1", port: 0, tls: (leafA.certificatePEM, leafA.privateKeyPEM),
                logger: relay.logs.logger,
                onServerRunning: { port in if let port { ports.continuation.yield(port) } },
                certificates: certificates
            )
        )
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: relay.logs.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.stream.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let url = "https://127.0.0.1:\(port)/healthz"
            func status(trusting caFile: String) async -> Int? {
                guard let pool = try? HTTP2Pool(configuration: .init(maxConnections: 1, caFile: caFile)) else {
                    return nil
                }
                let response = try? await pool.send(HTTP2Request(method: "GET", url: url))
                await pool.shutdown(gracePeriod: .zero)
                return response?.status
            }
            #expect(await status(trusting: caA) == 200)
            #expect(await status(trusting: caB) == nil, "the second CA does not sign the first certificate")

            try leafB.certificatePEM.write(toFile: certFile, atomically: true, encoding: .utf8)
            try leafB.privateKeyPEM.write(toFile: keyFile, atomically: true, encoding: .utf8)
            try certificates.reload()
            #expect(await status(trusting: caB) == 200, "new connections get the reloaded certificate")
            #expect(await status(trusting: caA) == nil)

            try "not a certificate".write(toFile: certFile, atomically: true, encoding: .utf8)
            #expect(throws: (any Error).self) { try certificates.reload() }
            #expect(await status(trusting: caB) == 200, "a pair that does not load leaves the last good one")

            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
