import ArgumentParser
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import RelayApplication

/// `pushrelay healthcheck`: asks the relay that this configuration describes whether it is alive (`/healthz`) or
/// ready (`/readyz`), and exits 0 or 1: the container image's HEALTHCHECK.
///
/// The address, the port and whether to speak TLS come from the configuration (the same file `serve` reads), so
/// the check stays right when they change. A wildcard listen address is asked on loopback.
struct HealthcheckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "healthcheck",
        abstract: "Ask the configured relay's /healthz (or /readyz); exit 0 when it answers 200, 1 otherwise.",
        discussion: """
            Reads [server] listen, tls_cert_file and tls_key_file from the configuration and sends one request to \
            the relay on this host. Over TLS the certificate is not verified: the check asks whether this host's \
            relay answers, not who it is, and its certificate names the public host, not the loopback address.
            """
    )

    @Option(name: .long, help: ConfigurationHelp.option)
    var config: String?

    @Flag(name: .long, help: "Ask /readyz (store reachable, accepting pushes) instead of /healthz.")
    var ready = false

    @Option(name: .long, help: "Seconds to wait for the answer.")
    var timeout: Int = 5

    func run() async throws {
        let configuration: RelayConfiguration
        do {
            configuration = try loadConfiguration(config)
        } catch {
            printError("unhealthy: \(error)")
            throw ExitCode(1)
        }
        let target = Self.target(configuration.server)
        let path = ready ? "/readyz" : "/healthz"
        do {
            let status = try await Self.get(
                host: target.host, port: target.port, tls: target.tls, path: path, timeout: .seconds(Int64(timeout)))
            guard status == 200 else {
                printError("unhealthy: \(target.description)\(path) answered \(status)")
                throw ExitCode(1)
            }
            print("healthy: \(target.description)\(path) answered 200")
        } catch let code as ExitCode {
            throw code
        } catch {
            printError("unhealthy: \(target.description)\(path): \(error)")
            throw ExitCode(1)
        }
    }

    /// Where to ask: the listen address, with a wildcard (`0.0.0.0`, `::`) replaced by the loopback address.
    static func target(_ server: RelayConfiguration.Server) -> (host: String, port: Int, tls: Bool, description: String)
    {
        let host =
            switch server.listen.host {
            case "0.0.0.0", "": "127.0.0.1"
            case "::", "[::]": "::1"
            default: server.listen.host
            }
        let scheme = server.usesTLS ? "https" : "http"
        let shown = host.contains(":") ? "[\(host)]" : host
        return (host, server.listen.port, server.usesTLS, "\(scheme)://\(shown):\(server.listen.port)")
    }

    /// Sends `GET path` over HTTP/1.1 (inside TLS when `tls`) and returns the response's status code.
    static func get(host: String, port: Int, tls: Bool, path: String, timeout: Duration) async throws -> Int {
        let sslContext: NIOSSLContext?
        if tls {
            var configuration = TLSConfiguration.makeClientConfiguration()
            // See the command's discussion: liveness of this host's relay, not its identity.
            configuration.certificateVerification = .none
            configuration.applicationProtocols = ["http/1.1"]
            sslContext = try NIOSSLContext(configuration: configuration)
        } else {
            sslContext = nil
        }
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.init(timeout))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: sslContext, serverHostname: nil))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel)
                }
            }
        return try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                try await channel.executeThenClose { inbound, outbound in
                    var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path)
                    head.headers.add(name: "Host", value: host.contains(":") ? "[\(host)]" : host)
                    head.headers.add(name: "Connection", value: "close")
                    try await outbound.write(.head(head))
                    try await outbound.write(.end(nil))
                    for try await part in inbound {
                        if case .head(let response) = part { return Int(response.status.code) }
                    }
                    throw HealthcheckError("the connection closed before an answer")
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                // Closing ends the request's reads, so the group does not wait on them.
                channel.channel.close(promise: nil)
                throw HealthcheckError("no answer within \(timeout)")
            }
            defer { group.cancelAll() }
            guard let status = try await group.next() else { throw HealthcheckError("no answer") }
            return status
        }
    }
}

struct HealthcheckError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
