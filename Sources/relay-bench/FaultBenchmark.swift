import ArgumentParser
import Foundation
import RelayHTTP2
import RelaySimulator

/// `relay-bench faults`: issue 19's proof, measured from outside. For each scenario it starts the provider simulator
/// in this process and a relay (`pushrelay serve`) as a child process configured against it, sends pushes through
/// the relay while the simulator fails as the scenario says, follows every ticket to its final receipt, and reconciles
/// the receipts with the simulator's own record of what it accepted (``FaultLedger``). It prints a Markdown table and
/// exits 1 when a scenario misses its criterion.
///
/// A fault is switched on and off by wall time (``ProviderSimulator/injectFaults(_:)``): a benchmark, not a test.
struct FaultBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "faults",
        abstract: "Push through the relay while its upstream fails; exit 1 unless every scenario meets its criterion.",
        discussion: """
            Scenarios: outage (every send 503 for --fault-seconds), storm (30 % 503 for --fault-seconds), resets (10 %
            RST_STREAM), stalls (10 % never answered), kill (kill -9 of the relay mid-run with a slow upstream, then a
            restart), quota (a daily quota of 10 across a kill -9 and a restart), slow (an upstream that answers in 12
            s, past the relay's 10 s timeout), store-full (the SQLite store's filesystem full for 20 s: a tmpfs, mounted
            as root or in a user namespace, else it is skipped), postgres-down (PostgreSQL cut off for 10 s through a
            forwarder: needs --postgres-url or RELAY_TEST_POSTGRES_URL, else it is skipped). The first four must deliver
            at least 99 % of the pushes and lose none; kill must leave no ticket without a final receipt; quota must
            admit exactly 10 in the day; slow must send no push more than twice and leave no ticket without a final
            receipt; store-full and postgres-down must leave no ticket without a final receipt and refuse only with 503
            (postgres-down: never 429). Takes about three minutes.
            """
    )

    @Option(help: "Pushes per scenario (outage, storm, resets, stalls, kill).")
    var pushes = 2000
    @Option(help: "Seconds over which a scenario's pushes are sent (open loop).")
    var sendSeconds = 4.0
    @Option(help: "Seconds each fault stays on, from half a second into the sending.")
    var faultSeconds = 3.0
    @Option(help: "Seconds receipts are followed before those still pending count as stuck.")
    var followSeconds = 60
    @Option(name: .customLong("scenario"), help: "Run only this scenario (repeatable).")
    var scenarios: [Scenario] = []
    @Option(help: "The pushrelay executable (default: beside relay-bench).")
    var pushrelay: String?
    @Option(
        help: """
            The PostgreSQL database of postgres-down (postgres://…; default: $RELAY_TEST_POSTGRES_URL, as \
            scripts/postgres.sh prints it). The scenario works in a schema of its own, dropped at its end.
            """)
    var postgresURL: String?

    enum Scenario: String, CaseIterable, ExpressibleByArgument {
        case outage, storm, resets, stalls, kill, quota, slow
        case storeFull = "store-full"
        case postgresDown = "postgres-down"

        /// The fault the simulator injects while it is switched on.
        var fault: FaultInjection? {
            switch self {
            case .outage: .outage(.serviceUnavailable)
            case .storm: FaultInjection(.serviceUnavailable, share: 0.3)
            case .resets: FaultInjection(.resetStream, share: 0.1)
            case .stalls: FaultInjection(.stall, share: 0.1)
            case .kill, .quota, .slow, .storeFull, .postgresDown: nil
            }
        }
    }

    /// One line of the table.
    struct Row {
        var scenario: String
        var tally: FaultLedger.Tally
        var criterion: String
        var passed: Bool
        var notes: String
        var seconds: Double
        /// Why the scenario did not run (it needs root, or a PostgreSQL database): it neither passes nor fails.
        var skipped: String? = nil

        static func skipped(_ scenario: String, criterion: String, because reason: String) -> Row {
            Row(
                scenario: scenario, tally: FaultLedger.Tally(), criterion: criterion, passed: true, notes: "",
                seconds: 0, skipped: reason)
        }
    }

    func run() async throws {
        let executable = try BenchRelay.executable(pushrelay)
        guard pushes >= 100, sendSeconds > 0, faultSeconds > 0, followSeconds > 0 else {
            throw ValidationError("--pushes at least 100; --send-seconds, --fault-seconds, --follow-seconds above 0")
        }
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "relay-bench-faults-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: base) }
        let credentials = try SimulatorCredentials()
        let selected = scenarios.isEmpty ? Scenario.allCases : scenarios
        var rows: [Row] = []
        for (index, scenario) in selected.enumerated() {
            let clock = ContinuousClock()
            let start = clock.now
            let run = ScenarioRun(
                executable: executable, directory: base + "/\(scenario.rawValue)", credentials: credentials,
                prefix: String(format: "%02x", index), options: self)
            var row: Row
            switch scenario {
            case .outage, .storm, .resets, .stalls: row = try await run.fault(scenario)
            case .kill: row = try await run.kill()
            case .quota: row = try await run.quota()
            case .slow: row = try await run.slow()
            case .storeFull: row = try await run.storeFull()
            case .postgresDown: row = try await run.postgresDown(url: postgresDatabase)
            }
            row.seconds = Double((clock.now - start).components.seconds)
            rows.append(row)
            if let reason = row.skipped {
                print("relay-bench faults: \(scenario.rawValue): skipped: \(reason)")
            } else {
                print("relay-bench faults: \(scenario.rawValue): \(row.passed ? "passed" : "FAILED") (\(row.notes))")
            }
        }
        print(Self.table(rows))
        guard rows.allSatisfy(\.passed) else { throw ExitCode(1) }
    }

    /// The PostgreSQL URL of postgres-down: `--postgres-url`, else `RELAY_TEST_POSTGRES_URL`; `nil` when neither.
    var postgresDatabase: String? {
        let url = postgresURL ?? ProcessInfo.processInfo.environment["RELAY_TEST_POSTGRES_URL"]
        return url?.isEmpty == false ? url : nil
    }

    /// The rows as a Markdown table. Lost counts stuck and missing tickets (and final receipts that disagree with
    /// the upstream); Refused the pushes of requests not answered with tickets, of which 503 and 429.
    static func table(_ rows: [Row]) -> String {
        var lines = [
            "| Scenario | Pushes | Answered (pending) | Refused (503 / 429) | Delivered | Failed "
                + "| Lost (stuck / missing) | Upstream 200 | Most sends of a push | Criterion | Result | Seconds |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|",
        ]
        for row in rows {
            if let reason = row.skipped {
                let counts = String(repeating: "| – ", count: 8)
                lines.append("| \(row.scenario) \(counts)| \(row.criterion) | skipped: \(reason) | 0 |")
                continue
            }
            let tally = row.tally
            let percent = String(format: "%.2f", tally.deliveredPercent)
            let result = row.passed ? "pass" : "**FAIL**"
            let sends = tally.mostArrivals == 0 ? "" : "\(tally.mostArrivals)"
            lines.append(
                "| \(row.scenario) | \(tally.pushes) | \(tally.answered) (\(tally.answeredPending)) "
                    + "| \(tally.refused) (\(tally.unavailable) / \(tally.tooManyRequests)) "
                    + "| \(tally.delivered) (\(percent) %) | \(tally.failed) "
                    + "| \(tally.lost) (\(tally.stuck) / \(tally.missing)) | \(tally.upstreamAccepted) | \(sends) "
                    + "| \(row.criterion) | \(result) | \(Int(row.seconds)) |")
        }
        return lines.joined(separator: "\n")
    }
}

/// One scenario's simulator, relay and traffic.
struct ScenarioRun {
    let executable: String
    let directory: String
    let credentials: SimulatorCredentials
    let prefix: String
    let options: FaultBenchmark

    /// A simulator that records every request (the reconciliation reads its `apns-id`s), answering after `latency`
    /// plus up to `jitter`.
    func simulator(latency: Duration = .zero, jitter: Duration = .zero) async throws -> ProviderSimulator {
        var configuration = credentials.simulatorConfiguration()
        configuration.server.maxConcurrentStreams = 1000
        configuration.latency = latency
        configuration.latencyJitter = jitter
        return try await ProviderSimulator.start(configuration: configuration)
    }

    /// A relay against `simulator`, on SQLite unless `store` (the `[store]` section's lines) says otherwise, with
    /// limits out of the way unless `limits` (the `[limits]` section's lines) or the tenant's own say otherwise,
    /// `upstream`'s lines added to `[upstream]`, and the key of its tenant.
    func relay(
        _ simulator: ProviderSimulator, waitMs: Int, tenantLimits: [String] = [],
        store: String = #"url = "sqlite://relay.db""#, limits: String = Self.limitsOutOfTheWay, upstream: String = ""
    ) throws -> (BenchRelay, key: String) {
        let bench = try BenchRelay(executable: executable, directory: directory)
        try bench.configure(
            sections: """
                [store]
                \(store)
                [limits]
                \(limits)
                [receipts]
                wait_ms = \(waitMs)
                [audit]
                instance = "faults"
                """,
            upstream: upstream, simulator: simulator, credentials: credentials
        )
        return (bench, try bench.createTenant("faults", limits: tenantLimits))
    }

    /// `[limits]` that no scenario's traffic reaches.
    static let limitsOutOfTheWay = """
        rate_per_second = 1000000
        burst = 1000000
        daily_quota = 1000000000
        per_device_per_minute = 1000000
        """

    /// The `apns-id`s (lowercased) the simulator answered 200.
    static func accepted(_ simulator: ProviderSimulator) -> Set<String> {
        Set(simulator.received(.apns).filter { $0.status == 200 }.compactMap { $0.header("apns-id")?.lowercased() })
    }

    /// Stops what a scenario started: the client, the relay (SIGTERM: it drains), the simulator.
    static func stop(_ pool: HTTP2Pool, _ relay: RelayProcess, _ simulator: ProviderSimulator) async throws {
        await pool.shutdown()
        relay.kill(SIGTERM)
        _ = await relay.exitStatus()
        try await simulator.shutdown()
    }

    /// Outage, storm, resets, stalls: the fault goes on half a second into the sending, for `--fault-seconds`.
    func fault(_ scenario: FaultBenchmark.Scenario) async throws -> FaultBenchmark.Row {
        let simulator = try await simulator()
        // Requests wait 1 s for outcomes (the default is 10 s): what is not final by then is answered pending and
        // journaled, so a fault exercises the journal too.
        let (bench, key) = try relay(simulator, waitMs: 1000)
        let relay = try await bench.start()
        let pool = try bench.client(connections: 4)
        let traffic = FaultTraffic(pool: pool, url: bench.url, key: key, prefix: prefix)
        let fault = scenario.fault
        let faultSeconds = options.faultSeconds
        async let switched: Void = {
            try? await Task.sleep(for: .milliseconds(500))
            simulator.injectFaults(fault)
            try? await Task.sleep(for: .seconds(faultSeconds))
            simulator.injectFaults(nil)
        }()
        var ledger = await traffic.send(FaultTraffic.requests(pushes: options.pushes), over: options.sendSeconds)
        await switched
        try await traffic.follow(&ledger, timeout: .seconds(options.followSeconds))
        let tally = ledger.tally(upstreamAccepted: Self.accepted(simulator))
        let injected = simulator.faultsInjected
        try await Self.stop(pool, relay, simulator)
        return FaultBenchmark.Row(
            scenario: Self.title(scenario, seconds: faultSeconds),
            tally: tally,
            criterion: "≥ 99 % delivered, 0 lost",
            passed: tally.delivered * 100 >= tally.pushes * 99 && tally.lost == 0,
            notes: "\(injected) faults injected; refused \(ledger.refused); \(tally.missing) unknown to the relay, "
                + "\(tally.disagreeing) disagreeing with the upstream",
            seconds: 0
        )
    }

    /// How many times each `apns-id` (lowercased) arrived at the simulator, whatever it answered.
    static func arrivals(_ simulator: ProviderSimulator) -> [String: Int] {
        simulator.received(.apns).compactMap { $0.header("apns-id")?.lowercased() }.reduce(into: [:]) {
            $0[$1, default: 0] += 1
        }
    }

    /// A slow upstream (issue 37: "each push arrives at most twice"): the simulator answers every push after 12 s,
    /// past the relay's default `[upstream] timeout_ms` (10 s), so every attempt times out after it was sent, and
    /// the relay sends a push again at most `[upstream] max_attempts_after_timeout` times (default 1) before it ends
    /// it `ProviderUnavailable` ("may or may not have been delivered"). 100 pushes over 2 s, requests waiting 1 s:
    /// no push may arrive more than twice, and every ticket must reach a final receipt. Those receipts are `error`
    /// for pushes the simulator answered 200 after the relay stopped waiting, so they count as disagreeing (lost) in
    /// the table, by design: the criterion is on stuck and missing tickets.
    ///
    /// The timeouts open the upstream's circuit breaker, which holds the pushes not yet sent again until their retry
    /// window ends (300 s by default): `[upstream] retry_window_seconds = 30` ends them within the following.
    func slow() async throws -> FaultBenchmark.Row {
        let mostSends = 2
        let simulator = try await simulator(latency: .seconds(12))
        let (bench, key) = try relay(simulator, waitMs: 1000, upstream: "retry_window_seconds = 30")
        let relay = try await bench.start()
        let pool = try bench.client()
        let traffic = FaultTraffic(pool: pool, url: bench.url, key: key, prefix: prefix)
        var ledger = await traffic.send(FaultTraffic.requests(pushes: 100), over: 2)
        try await traffic.follow(&ledger, timeout: .seconds(options.followSeconds))
        let tally = ledger.tally(upstreamAccepted: Self.accepted(simulator), arrivals: Self.arrivals(simulator))
        try await Self.stop(pool, relay, simulator)
        let errors = ledger.receipts.values.filter { $0 == "error" }.count
        return FaultBenchmark.Row(
            scenario: Self.title(.slow, seconds: 0),
            tally: tally,
            criterion: "≤ \(mostSends) sends of a push; 0 stuck, 0 missing",
            passed: tally.answered == tally.pushes && tally.stuck == 0 && tally.missing == 0
                && (1...mostSends).contains(tally.mostArrivals),
            notes: "\(tally.arrivedAgain) pushes sent twice or more, at most \(tally.mostArrivals) times; "
                + "\(errors) final error receipts; refused \(ledger.refused)",
            seconds: 0
        )
    }

    static func title(_ scenario: FaultBenchmark.Scenario, seconds: Double) -> String {
        let duration = seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
        return switch scenario {
        case .outage: "(a) upstream outage, \(duration)"
        case .storm: "(b) 30 % 503 storm, \(duration)"
        case .resets: "(c) 10 % resets, \(duration)"
        case .stalls: "(d) 10 % stalls, \(duration)"
        case .kill: "(e) kill -9 mid-run, slow upstream, restart"
        case .quota: "(f) daily quota across kill -9 and restart"
        case .slow: "(g) slow upstream: answers in 12 s"
        case .storeFull: "(h) SQLite store's filesystem full, 20 s"
        case .postgresDown: "(i) PostgreSQL unreachable, 10 s"
        }
    }

    /// kill -9 mid-run: the upstream answers in 0.3-0.9 s and requests wait 0.5 s, so many pushes are answered pending
    /// (journaled) and still on the wire when the relay is killed, a quarter of a second after the last request went
    /// out; the relay is started again on the same store, and every ticket must reach a final receipt.
    func kill() async throws -> FaultBenchmark.Row {
        let simulator = try await simulator(latency: .milliseconds(300), jitter: .milliseconds(600))
        let (bench, key) = try relay(simulator, waitMs: 500)
        let first = try await bench.start()
        let pool = try bench.client(connections: 4)
        let traffic = FaultTraffic(pool: pool, url: bench.url, key: key, prefix: prefix)
        let killAfter = Duration.seconds(options.sendSeconds) + .milliseconds(250)
        async let killed: Void = {
            try? await Task.sleep(for: killAfter)
            first.kill(SIGKILL)
        }()
        var ledger = await traffic.send(FaultTraffic.requests(pushes: options.pushes), over: options.sendSeconds)
        await killed
        let status = await first.exitStatus()
        let second = try await bench.start()
        try await traffic.follow(&ledger, timeout: .seconds(options.followSeconds))
        let tally = ledger.tally(upstreamAccepted: Self.accepted(simulator))
        try await Self.stop(pool, second, simulator)
        return FaultBenchmark.Row(
            scenario: Self.title(.kill, seconds: 0),
            tally: tally,
            criterion: "0 stuck, 0 lost; some answered pending",
            passed: status == SIGKILL && tally.lost == 0 && tally.answeredPending > 0,
            notes: "killed by signal \(status); unanswered \(ledger.refused); \(tally.missing) unknown to the relay, "
                + "\(tally.disagreeing) disagreeing, \(tally.untracked) accepted upstream without a ticket",
            seconds: 0
        )
    }

    /// The daily quota across a crash: a tenant with a quota of 10 sends 6 pushes, answered pending (the upstream
    /// takes 2 s, requests wait 0.5 s); the relay is killed and started again, and resumes them; then 6 more, one
    /// request at a time, while those are still in flight: exactly 4 may be admitted.
    func quota() async throws -> FaultBenchmark.Row {
        let quota = 10
        let before = 6
        let simulator = try await simulator(latency: .seconds(2))
        let (bench, key) = try relay(simulator, waitMs: 500, tenantLimits: ["--daily-quota", "\(quota)"])
        let first = try await bench.start()
        let pool = try bench.client()
        let traffic = FaultTraffic(pool: pool, url: bench.url, key: key, prefix: prefix)
        var ledger = await traffic.send((0..<before).map { [$0] }, over: 0.1)
        first.kill(SIGKILL)
        _ = await first.exitStatus()
        let second = try await bench.start()
        var after = FaultLedger()
        for number in before..<(2 * before) {
            after.merge(await traffic.push([number], respondAsync: false))
        }
        ledger.merge(after)
        try await traffic.follow(&ledger, timeout: .seconds(options.followSeconds))
        let tally = ledger.tally(upstreamAccepted: Self.accepted(simulator))
        try await Self.stop(pool, second, simulator)
        let admittedAfter = after.tickets.count
        let refusedAfter = after.refused["status 429"] ?? 0
        return FaultBenchmark.Row(
            scenario: Self.title(.quota, seconds: 0),
            tally: tally,
            criterion: "quota \(quota): \(quota - before) of \(before) admitted after the restart, 0 lost",
            passed: tally.answered == quota && admittedAfter == quota - before && refusedAfter == before - admittedAfter
                && tally.lost == 0,
            notes: "admitted \(tally.answered - admittedAfter) before the kill, \(admittedAfter) after it, "
                + "\(refusedAfter) refused with 429",
            seconds: 0
        )
    }
}
