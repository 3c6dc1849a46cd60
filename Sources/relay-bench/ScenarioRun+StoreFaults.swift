import ArgumentParser
import Foundation
import RelaySimulator

/// The store's faults (issue 37): the SQLite store's filesystem full, PostgreSQL unreachable. A request the relay
/// cannot store is refused with 503 (`STORE_UNAVAILABLE`), which is not a loss: the caller was told and sends it
/// again. A ticket it answered (200 or 202, `ok` or `pending`) must reach its final receipt all the same.
extension ScenarioRun {
    /// The store's filesystem full for 20 s: a relay on SQLite in a tmpfs of its own (``FaultFilesystem``) takes 10
    /// single-push requests a second for 30 s, none of them `Prefer: respond-async`; the upstream answers in 5 s and
    /// requests wait 2 s, so each push is answered `pending` and journaled, and finishes 3 s later; 5 s in, the
    /// filesystem is filled (and topped up as the store frees anything) for 20 s, then freed.
    func storeFull() async throws -> FaultBenchmark.Row {
        let seconds = 20
        let title = Self.title(.storeFull, seconds: Double(seconds))
        let criterion = "0 lost (0 stuck, 0 missing); refusals only 503"
        let filesystem: FaultFilesystem
        do {
            filesystem = try FaultFilesystem.prepare(at: directory + "/store", megabytes: 64, pushrelay: executable)
        } catch let error as FaultFilesystem.Unavailable {
            return .skipped(
                title, criterion: criterion,
                because: "cannot mount a tmpfs for the store, as root or in a user namespace (\(error.reason))")
        }
        defer { filesystem.unmount() }
        let simulator = try await simulator(latency: .seconds(5))
        let (bench, key) = try relay(simulator, waitMs: 2000, store: #"url = "sqlite://\#(filesystem.path)/relay.db""#)
        let relay = try await bench.start(launcher: filesystem.launcher)
        let pool = try bench.client()
        let traffic = FaultTraffic(pool: pool, url: bench.url, key: key, prefix: prefix)
        let pid = relay.pid
        async let filled: Int = {
            try? await Task.sleep(for: .seconds(5))
            return await filesystem.keepFull(for: .seconds(seconds), relay: pid)
        }()
        var ledger = await traffic.send((0..<300).map { [$0] }, over: 30, synchronous: true)
        let filler = await filled
        try await traffic.follow(&ledger, timeout: .seconds(options.followSeconds))
        let tally = ledger.tally(upstreamAccepted: Self.accepted(simulator))
        try await Self.stop(pool, relay, simulator)
        return FaultBenchmark.Row(
            scenario: title,
            tally: tally,
            criterion: criterion,
            passed: tally.lost == 0 && tally.refused == tally.unavailable,
            notes:
                "filled with \(filler / 1_048_576) MiB\(filesystem.launcher == nil ? "" : " in the relay's namespace")"
                + "; refused \(ledger.refused); \(tally.disagreeing) disagreeing "
                + "with the upstream, \(tally.untracked) accepted upstream without a ticket",
            seconds: 0
        )
    }

    /// PostgreSQL unreachable for 10 s: a relay on PostgreSQL (a schema of its own in `url`'s database) reaches it
    /// through a ``TCPFaultForwarder``; it takes 300 pushes over 30 s (the usual mix of single requests and batches)
    /// from a tenant allowed 50 a second (bursts of 200), an upstream answering in 0.5-1.5 s and requests waiting
    /// 1 s; 8 s in, the forwarder closes every connection to the database and black-holes new ones for 10 s.
    func postgresDown(url: String?) async throws -> FaultBenchmark.Row {
        let seconds = 10
        let title = Self.title(.postgresDown, seconds: Double(seconds))
        let criterion = "0 lost (0 stuck, 0 missing), 0 answered 429; refusals only 503"
        guard let url else {
            return .skipped(
                title, criterion: criterion,
                because: "no PostgreSQL database: pass --postgres-url or set RELAY_TEST_POSTGRES_URL "
                    + "(scripts/postgres.sh starts one and prints it)")
        }
        guard var components = URLComponents(string: url), let host = components.host else {
            throw ValidationError("--postgres-url (or RELAY_TEST_POSTGRES_URL) is not a postgres:// URL")
        }
        let forwarder = try await TCPFaultForwarder.start(targetHost: host, targetPort: components.port ?? 5432)
        let schema = "relay_bench_faults_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        components.host = "127.0.0.1"
        components.port = forwarder.port
        components.queryItems =
            (components.queryItems ?? []).filter { $0.name != "search_path" }
            + [URLQueryItem(name: "search_path", value: schema)]
        defer { Self.dropSchema(schema, in: url) }
        // PostgreSQL requires a journal key (every instance the same one); a SQLite store makes its own.
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let keyFile = directory + "/journal.key"
        var generator = SystemRandomNumberGenerator()
        let journalKey = Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        try journalKey.base64EncodedString().write(toFile: keyFile, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile)
        let simulator = try await simulator(latency: .milliseconds(500), jitter: .seconds(1))
        let (bench, key) = try relay(
            simulator, waitMs: 1000,
            store: """
                url = "\(components.string ?? url)"
                journal_key_file = "journal.key"
                """,
            limits: """
                rate_per_second = 50
                burst = 200
                daily_quota = 1000000000
                per_device_per_minute = 1000000
                """)
        let relay = try await bench.start()
        let pool = try bench.client()
        let traffic = FaultTraffic(pool: pool, url: bench.url, key: key, prefix: prefix)
        async let switched: Void = {
            try? await Task.sleep(for: .seconds(8))
            forwarder.cut()
            try? await Task.sleep(for: .seconds(seconds))
            forwarder.restore()
        }()
        var ledger = await traffic.send(FaultTraffic.requests(pushes: 300), over: 30)
        await switched
        try await traffic.follow(&ledger, timeout: .seconds(options.followSeconds))
        let tally = ledger.tally(upstreamAccepted: Self.accepted(simulator))
        let statistics = forwarder.statistics
        try await Self.stop(pool, relay, simulator)
        try await forwarder.shutdown()
        return FaultBenchmark.Row(
            scenario: title,
            tally: tally,
            criterion: criterion,
            passed: tally.lost == 0 && tally.tooManyRequests == 0 && tally.refused == tally.unavailable,
            notes: "\(statistics.cut) database connections cut, \(statistics.held) held while down; refused "
                + "\(ledger.refused); \(tally.disagreeing) disagreeing with the upstream, \(tally.untracked) accepted "
                + "upstream without a ticket",
            seconds: 0
        )
    }

    /// Drops the scenario's schema with `psql` (scripts/postgres.sh installs it), or says what was left behind.
    private static func dropSchema(_ schema: String, in url: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "psql", "--no-psqlrc", "--quiet", "--command", "DROP SCHEMA IF EXISTS \(schema) CASCADE", url,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus == 0 { return }
        } catch {}
        print("relay-bench faults: could not drop schema \(schema) with psql; drop it by hand")
    }
}
