import ArgumentParser
import Foundation
import RelayCore
import RelayHTTP2
import RelaySimulator

/// A relay for a benchmark, run as its own process (`pushrelay serve`) against a simulator in this process: its
/// folder (TLS certificate for its listener, configuration, SQLite store), its tenants and keys, and its process.
///
/// `relay-bench relay` and `relay-bench faults` both start their relays through it; the process itself is
/// ``RelayProcess``, which the crash-recovery tests use too.
struct BenchRelay {
    /// The `pushrelay` executable.
    let executable: String
    /// The folder of the configuration, the store and the certificates.
    let directory: String
    /// The listener's port on 127.0.0.1.
    let port: Int
    /// The CA that signed the listener's certificate, for clients.
    let caFile: String

    var configPath: String { directory + "/relay.conf" }
    var url: String { "https://127.0.0.1:\(port)" }

    /// `explicit`, or the `pushrelay` beside this executable; throws when there is none.
    static func executable(_ explicit: String?) throws -> String {
        let executable =
            explicit
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
                "pushrelay"
            ).path
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ValidationError(
                "no pushrelay executable at \(executable); build it (swift build -c release --product pushrelay)")
        }
        return executable
    }

    /// Makes `directory` with a TLS certificate for the listener, and picks a free port.
    init(executable: String, directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let identity = try HTTP2TestIdentity.generate()
        let leaf = try identity.issueServerCertificate(host: "127.0.0.1")
        self.caFile = try identity.write(to: directory + "/relay-ca")
        try leaf.certificatePEM.write(toFile: directory + "/relay.pem", atomically: true, encoding: .utf8)
        try leaf.privateKeyPEM.write(toFile: directory + "/relay-key.pem", atomically: true, encoding: .utf8)
        self.executable = executable
        self.directory = directory
        self.port = try RelayProcess.freePort()
    }

    /// Writes `relay.conf`: `[server]` (the listener, TLS, then `server`'s own lines), `sections` (the caller's
    /// `[store]`, `[limits]`, `[receipts]` …), and the simulator's `[upstream]` and provider sections, with
    /// `upstream`'s lines added to `[upstream]`. `endpoint` and `caFile` send the providers' requests elsewhere (the
    /// simulator still issues FCM's tokens, so `caFile` must trust it too).
    func configure(
        server: String = "",
        sections: String,
        upstream: String = "",
        simulator: ProviderSimulator,
        credentials: SimulatorCredentials,
        transport: String? = nil,
        endpoint: String? = nil,
        caFile upstreamCA: String? = nil
    ) throws {
        let files = try credentials.write(to: directory + "/keys", tokenURI: simulator.fcmTokenURI)
        var providers = credentials.relayConfiguration(
            caFile: upstreamCA ?? simulator.caFilePath, files: files, endpoint: endpoint ?? simulator.baseURL,
            transport: transport)
        if !upstream.isEmpty {
            providers = providers.replacingOccurrences(of: "[upstream]\n", with: "[upstream]\n" + upstream + "\n")
        }
        let config = """
            [server]
            listen = "127.0.0.1:\(port)"
            tls_cert_file = "relay.pem"
            tls_key_file = "relay-key.pem"
            \(server)
            \(sections)

            """
        try (config + providers).write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// Creates a tenant allowed critical alerts (with `limits`: `--daily-quota 10` …) and returns a key of it.
    func createTenant(_ name: String, limits: [String] = []) throws -> String {
        _ = try Self.runTool(
            executable, ["tenant", "create", name, "--allow-critical-alerts"] + limits + ["--config", configPath])
        let issued = try Self.runTool(executable, ["key", "issue", "--tenant", name, "--json", "--config", configPath])
        guard let key = JSONValue.decode(Array(issued.utf8))?.objectValue?["key"]?.stringValue else {
            throw ValidationError("could not issue a key: \(issued)")
        }
        return key
    }

    /// Starts `pushrelay serve` and returns once it listens.
    ///
    /// - Parameters:
    ///   - quiet: the relay logs at `warning`: no access line per request, as a throughput run wants (and as builds
    ///     before the access line ran). Its start line is then not logged: the caller waits for `/readyz`.
    ///   - launcher: A program that runs `pushrelay` with the arguments it is given (`serve --config …`), in place of
    ///     ``executable`` (`relay-bench faults` runs the relay in a namespace of its own that way).
    func start(quiet: Bool = false, launcher: String? = nil) async throws -> RelayProcess {
        let process = try RelayProcess(
            executable: launcher ?? executable, config: configPath, logLevel: quiet ? "warning" : "info")
        guard !quiet else { return process }
        do {
            try await process.waitUntilListening()
        } catch {
            process.kill(SIGKILL)
            throw error
        }
        return process
    }

    /// A client of the relay's listener: HTTP/2 over TLS, `connections` connections of 100 streams each (the
    /// listener allows 100 per connection, `RelayHTTP2Settings`).
    func client(connections: Int = 2) throws -> HTTP2Pool {
        try HTTP2Pool(configuration: .init(maxConnections: connections, maxConcurrentStreams: 100, caFile: caFile))
    }

    /// Runs a `pushrelay` command to its end; throws when it fails.
    static func runTool(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("pushrelay \(arguments.joined(separator: " ")) failed")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
