import ArgumentParser
import Dispatch
import Foundation
import RelayApplication
import RelaySimulator

/// `pushrelay simulate`: runs the APNs/FCM/Expo simulator with fresh demo credentials, and writes what a relay needs
/// to talk to it. A second simulator, on the next port, plays the upstream of a second app, `beta`, with credentials
/// of its own, so that the fragment shows a relay with two apps.
struct SimulateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run a local APNs/FCM/Expo simulator (HTTP/2 over TLS) with demo credentials.",
        discussion: """
            Writes ca.pem, AuthKey_<key id>.p8, fcm-service-account.json and relay.conf.fragment into the output \
            directory (the second app's keys into <out>/beta; its simulator listens on the next port, or any free \
            one when that is taken), then \
            serves until interrupted (SIGINT or SIGTERM). Device tokens starting with 0410, 0400, \
            0403, 0413, 0503, 0429, 0500, 0401, 0555 or 0610 fail in scripted ways (see RelaySimulator's \
            ScriptedToken). The CA is kept in <out>/ca, so a restarted simulator is trusted by the same ca.pem. \
            GET /simulator/last-payload/<token> on either simulator answers the last payload it accepted for a \
            device token (APNs: the body and the apns-push-type, apns-priority and apns-topic headers; FCM: the \
            message; Expo: the message; percent-encode an Expo token's brackets) as {"provider", "headers", "body"}, \
            with "ignoredByDevice" when a device would drop the push (a Live Activity push without its timestamp…). \
            --record FILE appends one JSON line per notification either simulator answers, as it answers: \
            {"time", "provider", "token", "id", "status", "reason", "ignoredByDevice"}, where "token" is the first 16 \
            bytes of the device token's SHA-256 in hex (an APNs token lowercased first), never the token itself.
            """
    )

    @Option(help: ArgumentHelp("Address and port to listen on.", valueName: "host:port"))
    var listen: String = "127.0.0.1:8443"

    @Option(name: .customLong("latency-ms"), help: "Delay added to every answer, in milliseconds.")
    var latencyMilliseconds: Int = 0

    @Option(help: ArgumentHelp("Directory for the CA, the demo keys and the configuration fragment.", valueName: "dir"))
    var out: String = "./simulator"

    @Option(
        help: ArgumentHelp(
            "Append one JSON line per notification answered to this file (created when missing).", valueName: "file"))
    var record: String?

    func validate() throws {
        _ = try Self.hostAndPort(self.listen)
        guard self.latencyMilliseconds >= 0 else {
            throw ValidationError("--latency-ms must not be negative.")
        }
    }

    func run() async throws {
        let (host, port) = try Self.hostAndPort(self.listen)
        let directory = URL(fileURLWithPath: self.out, isDirectory: true).standardizedFileURL
        let credentials = try SimulatorCredentials()
        let betaCredentials = try SimulatorCredentials.beta()
        let betaDirectory = directory.appendingPathComponent("beta", isDirectory: true)
        // One recorder for both simulators: their lines go to the one file, each request's in one write.
        let recorder = try self.record.map { try SimulatorRecorder(path: $0) }
        defer { recorder?.close() }
        func configuration(
            _ credentials: SimulatorCredentials, port: Int, directory: URL
        ) -> ProviderSimulator.Configuration {
            var configuration = credentials.simulatorConfiguration()
            configuration.server.host = host
            configuration.server.port = port
            configuration.server.certificateDirectory = directory.appendingPathComponent("ca", isDirectory: true).path
            configuration.latency = .milliseconds(self.latencyMilliseconds)
            // A long-running demo must not keep every request it ever saw.
            configuration.recordsRequests = false
            configuration.recorder = recorder
            return configuration
        }

        // Ignore the default actions before the sources exist, so an early signal cannot kill the process half-way.
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let (signals, signalled) = AsyncStream.makeStream(of: Int32.self)
        let queue = DispatchQueue(label: "pushrelay.simulate.signals")
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { signalled.yield(number) }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
        }

        let simulator = try await ProviderSimulator.start(
            configuration: configuration(credentials, port: port, directory: directory))
        let betaSimulator: ProviderSimulator
        do {
            // The next port when it is free, any free port otherwise: the fragment names the one it got.
            let next = port == 0 || port == 65_535 ? 0 : port + 1
            betaSimulator = try await ProviderSimulator.start(
                configuration: configuration(betaCredentials, port: next, directory: betaDirectory))
        } catch {
            do {
                betaSimulator = try await ProviderSimulator.start(
                    configuration: configuration(betaCredentials, port: 0, directory: betaDirectory))
            } catch {
                try? await simulator.shutdown()
                throw error
            }
        }
        do {
            let written = try Self.writeFiles(
                into: directory, credentials: credentials, simulator: simulator,
                beta: (betaDirectory, betaCredentials, betaSimulator))
            output("Provider simulator listening on \(simulator.baseURL) (APNs, FCM and Expo)")
            output("Provider simulator of app 'beta' listening on \(betaSimulator.baseURL) (APNs and FCM)")
            for path in written {
                output("  wrote \(path)")
            }
            if let recorder {
                output("Recording every notification answered to \(recorder.path), one JSON line each")
            }
            output(
                "Last payload sent to a device token: curl --cacert \(directory.appendingPathComponent("ca.pem").path) "
                    + "\(simulator.baseURL)/simulator/last-payload/<token>")
            output("Merge relay.conf.fragment into relay.conf; press Ctrl-C to stop.")
        } catch {
            try? await simulator.shutdown()
            try? await betaSimulator.shutdown()
            throw error
        }

        for await number in signals {
            output("Received signal \(number), shutting down.")
            break
        }
        try await simulator.shutdown()
        try await betaSimulator.shutdown()
        if let recorder, recorder.failedWrites > 0 {
            output("Could not write the lines of \(recorder.failedWrites) requests to \(recorder.path).")
        }
    }

    /// Writes the CA copy (both simulators' CAs), the keys and the configuration fragment; returns their paths.
    private static func writeFiles(
        into directory: URL,
        credentials: SimulatorCredentials,
        simulator: ProviderSimulator,
        beta: (directory: URL, credentials: SimulatorCredentials, simulator: ProviderSimulator)
    ) throws -> [String] {
        let files = try credentials.write(to: directory.path, tokenURI: simulator.fcmTokenURI)
        let betaFiles = try beta.credentials.write(to: beta.directory.path, tokenURI: beta.simulator.fcmTokenURI)
        let caFile = directory.appendingPathComponent("ca.pem")
        var authorities = try Data(contentsOf: URL(fileURLWithPath: simulator.caFilePath))
        authorities.append(contentsOf: Array("\n".utf8))
        authorities.append(try Data(contentsOf: URL(fileURLWithPath: beta.simulator.caFilePath)))
        try authorities.write(to: caFile, options: .atomic)
        let fragmentFile = directory.appendingPathComponent("relay.conf.fragment")
        let fragment =
            Self.configurationFragment(
                caFile: caFile.path, credentials: credentials, files: files, endpoint: simulator.baseURL)
            + "\n# A second app, beta: messages name it with \"app\": \"beta\"; allow it to a tenant with\n"
            + "# pushrelay tenant update NAME --allow-app default --allow-app beta\n"
            + beta.credentials.appRelayConfiguration(app: "beta", files: betaFiles, endpoint: beta.simulator.baseURL)
        try Data(fragment.utf8).write(to: fragmentFile, options: .atomic)
        return [
            caFile.path, files.apnsKey, files.serviceAccount, betaFiles.apnsKey, betaFiles.serviceAccount,
            fragmentFile.path,
        ]
    }

    /// The fragment `simulate` writes: a header, then the sections that point a relay at the simulator.
    static func configurationFragment(
        caFile: String,
        credentials: SimulatorCredentials,
        files: SimulatorCredentials.Files,
        endpoint: String
    ) -> String {
        """
        # Written by `pushrelay simulate`: merge into relay.conf to send through the simulator at \(endpoint).
        # The keys are demo keys made for this run; they are worthless anywhere else.
        """ + "\n\n" + credentials.relayConfiguration(caFile: caFile, files: files, endpoint: endpoint)
    }

    /// Splits `host:port` (`[v6]:port` for IPv6 literals).
    static func hostAndPort(_ text: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65_535).contains(port)
        else {
            throw ValidationError("--listen must be HOST:PORT, for example 127.0.0.1:8443.")
        }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = host.dropFirst().dropLast()
        }
        guard !host.isEmpty else {
            throw ValidationError("--listen must name a host, for example 127.0.0.1:8443.")
        }
        return (String(host), port)
    }
}

/// Writes a line to standard output at once: scripts wait for these lines, and `print` would hold them in a buffer
/// when standard output is a pipe.
private func output(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
