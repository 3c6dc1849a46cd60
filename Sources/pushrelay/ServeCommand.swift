import ArgumentParser
import Foundation
import Hummingbird
import Logging
import RelayApplication
import RelayCore
import RelayServer
import ServiceLifecycle

/// `pushrelay serve`: the relay.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the relay: the push APIs, receipts, health and metrics."
    )

    @Option(name: .long, help: "The relay's configuration file (TOML). Without it, defaults and PUSHRELAY_* variables.")
    var config: String?

    func run() async throws {
        let configuration: RelayConfiguration
        do {
            configuration = try RelayConfiguration.load(path: config, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("pushrelay: the configuration is not usable:\n\(error)\n".utf8))
            throw ExitCode(1)
        }
        Bootstrap.logging(format: configuration.logging.format, level: configuration.logging.level)
        Bootstrap.metrics()
        let logger = Logger(label: "pushrelay")

        let store = try await RelayAssembly.openStore(configuration)
        let assembly = try RelayAssembly.make(configuration: configuration, store: store, logger: logger)
        // Before the listener accepts: what a previous run left in the delivery journal (a crash, or a drain cut
        // short) is claimed and queued first; it is sent once the services run.
        try await assembly.relay.resumeJournal(includingOwn: true)
        var tls: (certificateChain: String, privateKey: String)?
        if let cert = configuration.server.tlsCertFile, let key = configuration.server.tlsKeyFile {
            tls = (try String(contentsOfFile: cert, encoding: .utf8), try String(contentsOfFile: key, encoding: .utf8))
        }
        let servesTLS = tls != nil
        let app = try buildApplication(
            RelayApplicationParts(
                relay: assembly.relay,
                host: configuration.server.listen.host,
                port: configuration.server.listen.port,
                tls: tls,
                connections: ConnectionLimits(configuration.server),
                metrics: {
                    Bootstrap.recordPoolGauges(assembly.poolStatistics())
                    return Bootstrap.exposition()
                },
                services: assembly.services,
                logger: logger,
                onServerRunning: { port in
                    logger.info(
                        "PushRelay listening",
                        metadata: [
                            "listen": "\(configuration.server.listen)", "port": "\(port.map(String.init) ?? "?")",
                            "tls": "\(servesTLS)",
                            "providers": "\(assembly.relay.configuredProviders.map(\.rawValue).sorted())",
                        ]
                    )
                }
            )
        )
        // SIGTERM and SIGINT drain: the server stops accepting, in-flight pushes finish for up to
        // `[server] drain_seconds` (what is left is journaled for the next start), then the process exits.
        try await app.runService()
    }
}
