import ArgumentParser
import Foundation
import Hummingbird
import Logging
import NIOCore
import RelayApplication
import RelayCore
import RelayServer
import RelayStore
import ServiceLifecycle
import UnixSignals

/// `pushrelay serve`: the relay.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the relay: the push APIs, receipts, health and metrics."
    )

    @Option(name: .long, help: ConfigurationHelp.option)
    var config: String?

    func run() async throws {
        let file = locateConfiguration(config)
        let configuration: RelayConfiguration
        do {
            configuration = try RelayConfiguration.load(
                path: file.path, environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(
                Data("pushrelay: the configuration (\(file.summary)) is not usable:\n\(error)\n".utf8))
            throw ExitCode(1)
        }
        Bootstrap.logging(format: configuration.logging.format, level: configuration.logging.level)
        Bootstrap.metrics()
        let logger = Logger(label: "pushrelay")

        let store: any PushStore
        // Opening the store may wait minutes for PostgreSQL ([store] connect_timeout_seconds), before anything is
        // written: SIGTERM and SIGINT end the process at once meanwhile. As a container's PID 1 a signal without a
        // handler is ignored, so `docker stop` would otherwise wait for its SIGKILL. The default comes back before
        // the instance lease is taken; the service group installs its own handlers later.
        Self.exitOnSignals(true)
        do {
            store = try await RelayAssembly.openStore(configuration)
        } catch {
            logger.critical("The store cannot be opened", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        Self.exitOnSignals(false)
        if let sqlite = store as? SQLiteStore, sqlite.createdFile {
            // Said aloud: a new database means no tenants and no keys, which a wrong path would explain.
            logger.notice(
                "Created a new, empty SQLite database (mode 0600)",
                metadata: ["relay.store": "\(configuration.storeSummary)"])
        }
        // The instance id names this relay's audit chain and holds its journal entries: one live process each.
        let claim: InstanceClaim
        do {
            claim = try await InstanceClaim.take(instance: configuration.audit.instance, store: store, logger: logger)
        } catch let inUse as InstanceInUse {
            logger.critical("Another relay runs with this instance id", metadata: ["error": "\(inUse)"])
            throw ExitCode(1)
        } catch {
            logger.critical("The instance id could not be leased in the store", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
        let assembly = try RelayAssembly.make(configuration: configuration, store: store, logger: logger)
        // Before the listener accepts: what a previous run left in the delivery journal (a crash, or a drain cut
        // short) is claimed and queued first; it is sent once the services run.
        try await assembly.relay.resumeJournal(includingOwn: true)
        var tls: (certificateChain: String, privateKey: String)?
        var certificates: TLSCertificates?
        if let cert = configuration.server.tlsCertFile, let key = configuration.server.tlsKeyFile {
            let pair = (
                try String(contentsOfFile: cert, encoding: .utf8), try String(contentsOfFile: key, encoding: .utf8)
            )
            tls = pair
            certificates = try TLSCertificates(certificateChain: pair.0, privateKey: pair.1, files: (cert, key))
        }
        let servesTLS = tls != nil
        let listen = configuration.server.listen
        let drain = configuration.server.drainSeconds
        let app = try buildApplication(
            RelayApplicationParts(
                relay: assembly.relay,
                host: listen.host,
                port: listen.port,
                tls: tls,
                connections: ConnectionLimits(configuration.server),
                metrics: {
                    Bootstrap.recordPoolGauges(assembly.poolStatistics())
                    return Bootstrap.exposition()
                },
                // The claim first, so that it stops last: the lease is given back after the last commit.
                services: [claim] + assembly.services + [ReloadOnHangUp(certificates: certificates, logger: logger)],
                logger: logger,
                onServerRunning: { port in
                    logger.info(
                        "PushRelay started",
                        metadata: Self.startMetadata(configuration, file: file, port: port, tls: servesTLS)
                    )
                },
                shutdownAnnouncer: ShutdownAnnouncer(logger: logger, drainSeconds: drain),
                certificates: certificates
            )
        )
        // SIGTERM and SIGINT drain: the server stops accepting, in-flight pushes finish for up to
        // `[server] drain_seconds` (what is left is journaled for the next start), then the process exits.
        let started = ContinuousClock.now
        do {
            try await app.runService()
        } catch {
            let text = "\(error)"
            if Self.isListenFailure(error) {
                logger.critical(
                    "Cannot listen on the configured address",
                    metadata: ["server.listen": "\(listen)", "error": "\(text)"])
            } else {
                logger.critical("The relay stopped with an error", metadata: ["error": "\(text)"])
            }
            throw ExitCode(1)
        }
        let uptime = started.duration(to: .now)
        logger.info(
            "PushRelay stopped", metadata: ["relay.uptime_seconds": .stringConvertible(uptime.components.seconds)])
    }

    /// Whether the listener could not take its address: the system refused the socket's bind (in use, not this
    /// host's, or a privileged port), as NIO reports it.
    static func isListenFailure(_ error: any Error) -> Bool {
        guard let io = error as? IOError else { return false }
        return [EADDRINUSE, EADDRNOTAVAIL, EACCES].contains(io.errnoCode)
    }

    /// With `true`, SIGTERM and SIGINT end the process at once (exit status 128 + the signal), as the default action
    /// would outside a container; with `false`, their default action again.
    static func exitOnSignals(_ immediately: Bool) {
        for number in [SIGTERM, SIGINT] {
            if immediately {
                signal(number) { _exit(128 + $0) }
            } else {
                signal(number, SIG_DFL)
            }
        }
    }

    /// What the start line says: the version, the file read, where it listens, the providers and apps, the store
    /// (without a password) and the audit chain.
    static func startMetadata(
        _ configuration: RelayConfiguration, file: ConfigurationFile, port: Int?, tls: Bool
    ) -> Logger.Metadata {
        var providers = ["expo"]
        if configuration.apns != nil { providers.append("apns") }
        if configuration.fcm != nil { providers.append("fcm") }
        var metadata: Logger.Metadata = [
            "relay.version": .string(RelayVersion.current),
            "relay.config": .string(file.summary),
            "server.listen": .string("\(configuration.server.listen)"),
            "server.port": port.map { .stringConvertible($0) } ?? .string("unknown"),
            "server.tls": .stringConvertible(tls),
            "relay.providers": .array(providers.sorted().map { .string($0) }),
            "relay.store": .string(configuration.storeSummary),
            "relay.audit": .string(configuration.auditSummary),
        ]
        if let apns = configuration.apns {
            metadata["apns.topic"] = .string(apns.topic)
            metadata["apns.environment"] = .string(apns.environment.rawValue)
        }
        if let fcm = configuration.fcm { metadata["fcm.project"] = .string(fcm.projectID) }
        // Every app with what it sends through: `default: apns, expo, fcm`, `beta: apns (com.example.beta), fcm`.
        metadata["relay.apps"] = .array(
            configuration.appNames.compactMap { name in
                configuration.allApps[name].map { .string("\(name): \(RelayConfiguration.appSummary($0))") }
            })
        return metadata
    }
}

/// Logs the start of a graceful shutdown. Listed after every other service, so that the service group, which stops
/// services in reverse order, tells it first, just after the listener has stopped accepting.
struct ShutdownAnnouncer: Service {
    let logger: Logger
    let drainSeconds: Int

    func run() async throws {
        try? await gracefulShutdown()
        logger.info(
            "Shutting down: the listener no longer accepts; accepted notifications drain, what is left is journaled",
            metadata: ["server.drain_seconds": .stringConvertible(drainSeconds)])
    }
}

/// SIGHUP: reloads the TLS certificate and key from their files for new connections (a renewed certificate without a
/// restart), and says so; every other setting still needs a restart. Without TLS there is nothing to reload, and the
/// log says that too (the signal no longer ends the process, its default action).
struct ReloadOnHangUp: Service {
    let certificates: TLSCertificates?
    let logger: Logger

    func run() async throws {
        let hangUps = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in hangUps {
                guard let certificates else {
                    logger.notice("SIGHUP: no TLS certificate to reload; other settings need a restart")
                    continue
                }
                do {
                    try certificates.reload()
                    logger.notice(
                        "SIGHUP: reloaded the TLS certificate and key for new connections; other settings need a restart"
                    )
                } catch {
                    logger.error(
                        "SIGHUP: the TLS certificate and key could not be reloaded; the previous ones stay in use",
                        metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
