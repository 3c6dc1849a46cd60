import ArgumentParser
import Foundation
import RelayCore
import RelayHTTP2
import RelaySimulator
import Synchronization

/// `relay-bench relay`: the relay end to end. The provider simulator and the load generator run in this process; the
/// relay runs as its own process (`pushrelay serve`, found beside this executable), so its CPU time and memory are
/// its own.
struct RelayBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Drive the relay end to end and print throughput, latency, CPU and memory as JSON.",
        discussion: "The last line of output is one JSON object."
    )

    @Option(help: "Single-message requests in the throughput phase.")
    var requests = 20_000
    @Option(help: "Concurrency of the throughput phases.")
    var concurrency = 200
    @Option(help: "Requests of 100 notifications in the batched phase.")
    var batches = 300
    @Option(help: "Requests per second of the paced latency phase.")
    var pacedRate = 1000
    @Option(help: "Seconds of the paced latency phase.")
    var pacedSeconds = 5
    @Option(help: "Provider of the notifications: apns, fcm or expo.")
    var provider = "apns"
    @Option(help: "The pushrelay executable (default: beside relay-bench).")
    var pushrelay: String?
    @Option(help: "The relay's audit log: on or off (to measure its cost).")
    var audit = "on"
    @Option(help: "The relay's store URL (default: a SQLite file in a temporary folder; postgres://… for PostgreSQL).")
    var store = "sqlite://relay.db"
    @Option(
        help: ArgumentHelp(
            "Load generator of the single-message and paced phases: pool, h2load or h2load-http1.",
            discussion: """
                pool: RelayHTTP2's pool (HTTP/2, 100 streams a connection). h2load: nghttp2's load generator, HTTP/2 \
                over 2 connections. h2load-http1: h2load over HTTP/1.1 with keep-alive, one request at a time on \
                each of --concurrency connections (paced: one connection per 100 requests a second), as Node's \
                HTTP clients (OneUptime, the Expo SDK) send.
                """
        ))
    var generator = Generator.pool
    @Option(help: "The relay's upstream transport ([upstream] transport): nghttp2 or curl.")
    var relayTransport = HTTP2Backend.nghttp2
    @Option(
        help: ArgumentHelp(
            "Milliseconds the simulated upstream takes to answer each request (a slow upstream).",
            discussion: "With --wait-ms below it, every push is answered pending and goes through the delivery journal."
        ))
    var upstreamDelayMs = 0
    @Option(help: "Plus a uniform random delay of up to this many milliseconds for each answer.")
    var upstreamJitterMs = 0
    @Option(help: "The relay's [receipts] wait_ms (default: the relay's own, 10000).")
    var waitMs: Int?
    @Option(
        help: ArgumentHelp(
            "An HTTP/2 server over TLS the relay sends every provider's requests to, instead of the simulator.",
            discussion: """
                Any server (nghttpd, nginx): the relay's APNs, FCM and Expo endpoints are this URL's origin (FCM's \
                OAuth tokens still come from the simulator). The ceiling and the direct latency reference POST to \
                the URL as given, which must answer 2xx (nghttpd: a file it serves, such as /index.html). Only an \
                upstream that answers like the provider (nginx returning 200 for APNs) gets pushes counted delivered.
                """
        ))
    var upstream: String?
    @Option(help: "The CA certificate (PEM) that signed --upstream's certificate (default: the system's trust store).")
    var upstreamCaFile: String?
    @Option(
        help: "Requests of the ceiling: h2load straight to the upstream, 2 connections of 500 streams (0: no ceiling).")
    var ceilingRequests = 100_000
    @Option(
        help: ArgumentHelp(
            "Relays on the one store, each its own process and instance id (more than 1: PostgreSQL only).",
            discussion: """
                The requests are dealt to them in turn, through the pool generator; the report gives the total and \
                each relay's notifications a second, the relays' CPU and PostgreSQL's (its processes', from /proc, \
                when it runs on this machine) per notification.
                """
        ))
    var instances = 1

    enum Generator: String, ExpressibleByArgument, CaseIterable {
        case pool, h2load
        case h2loadHTTP1 = "h2load-http1"
    }

    func run() async throws {
        let executable = try BenchRelay.executable(pushrelay)
        guard let kind = Provider(rawValue: provider) else { throw ValidationError("--provider: apns, fcm or expo") }
        guard audit == "on" || audit == "off" else { throw ValidationError("--audit: on or off") }
        let postgres = store.hasPrefix("postgres")
        guard instances >= 1, instances == 1 || postgres else {
            throw ValidationError("--instances: 1, or more with a postgres:// --store (relays cannot share SQLite)")
        }
        guard instances == 1 || generator == .pool else {
            throw ValidationError("--instances above 1 needs --generator pool (h2load drives one address)")
        }
        guard upstreamDelayMs >= 0, upstreamJitterMs >= 0 else {
            throw ValidationError("--upstream-delay-ms and --upstream-jitter-ms: 0 or more")
        }
        if ceilingRequests > 0 && H2LoadGenerator.executable("h2load") == nil {
            throw ValidationError(
                "the ceiling needs h2load on PATH (Debian: apt-get install nghttp2-client); "
                    + "--ceiling-requests 0 skips it")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "relay-bench-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // The upstream: the simulator, answering at once (or after --upstream-delay-ms), recording nothing.
        let credentials = try SimulatorCredentials()
        var simulatorConfiguration = credentials.simulatorConfiguration()
        simulatorConfiguration.recordsRequests = false
        simulatorConfiguration.server.maxConcurrentStreams = 1000
        simulatorConfiguration.latency = .milliseconds(upstreamDelayMs)
        simulatorConfiguration.latencyJitter = .milliseconds(upstreamJitterMs)
        let simulator = try await ProviderSimulator.start(configuration: simulatorConfiguration)
        let upstream = try Upstream(
            url: self.upstream, caFile: upstreamCaFile, simulator: simulator, directory: directory)

        // The ceiling: h2load straight to the upstream, before the relay starts, as many requests as it can answer.
        let ceiling: TransportBenchmark.Result? =
            ceilingRequests > 0
            ? try await H2LoadGenerator.load(
                url: upstream.directURL, headers: ["content-type: application/json"], body: upstream.directBody,
                total: ceilingRequests, concurrency: 1_000, directory: directory)
            : nil

        // The relays: TLS with HTTP/2, limits out of the way; with PostgreSQL, in a schema of their own and with one
        // journal key (PostgreSQL requires it, shared by every instance), each with its own instance id.
        var storeURL = store
        var journalKey = ""
        if postgres {
            let schema = "relay_bench_" + UUID().uuidString.lowercased().prefix(8)
            storeURL += (store.contains("?") ? "&" : "?") + "search_path=\(schema)"
            journalKey = directory + "/journal.key"
            let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max) }
            try Data(bytes).base64EncodedString().write(toFile: journalKey, atomically: true, encoding: .utf8)
        }
        var benches: [BenchRelay] = []
        for index in 1...instances {
            let bench = try BenchRelay(
                executable: executable, directory: instances == 1 ? directory : directory + "/relay-\(index)")
            try bench.configure(
                sections: """
                    [store]
                    url = "\(storeURL)"
                    \(postgres ? "journal_key_file = \"\(journalKey)\"" : "")
                    [limits]
                    rate_per_second = 1000000
                    burst = 1000000
                    daily_quota = 1000000000
                    per_device_per_minute = 1000000
                    [audit]
                    enabled = \(audit == "on")
                    instance = "bench-\(index)"
                    \(waitMs.map { "[receipts]\nwait_ms = \($0)" } ?? "")
                    """,
                simulator: simulator, credentials: credentials, transport: relayTransport.rawValue,
                endpoint: upstream.endpoint, caFile: upstream.caFile
            )
            benches.append(bench)
        }
        let key = try benches[0].createTenant("bench")
        var relays: [RelayProcess] = []
        defer { for relay in relays { relay.kill(SIGKILL) } }
        for bench in benches { relays.append(try await bench.start(quiet: true)) }
        let pids = relays.map(\.pid)

        let bench = benches[0]
        let relay = relays[0]
        let url = bench.url
        // 100 streams per connection (the listener's limit): as many connections as the concurrency needs, at least 2.
        let pools = try benches.map {
            try $0.client(connections: max(2, (concurrency + 99) / 100 / instances))
        }
        for (index, pool) in pools.enumerated() { try await Self.waitUntilReady(pool, url: benches[index].url) }
        let pool = pools[0]
        let urls = benches.map(\.url)
        let served = PerInstanceCount(instances)

        @Sendable func token(_ index: Int) -> String {
            switch kind {
            case .apns: String(format: "%064x", index)
            case .fcm: "bench:" + String(repeating: "x", count: 100) + String(index)
            case .expo: "ExponentPushToken[bench\(index)]"
            }
        }
        @Sendable func body(_ tokens: [String]) -> String {
            let to = tokens.map { "\"\($0)\"" }.joined(separator: ",")
            return #"{"messages":[{"to":[\#(to)],"title":"Bench","body":"Load"}]}"#
        }
        @Sendable func request(_ tokens: [String], to instance: Int = 0) -> HTTP2Request {
            HTTP2Request(
                url: urls[instance] + "/v1/push",
                headers: [
                    HTTPHeader("authorization", "Bearer \(key)"), HTTPHeader("content-type", "application/json"),
                ],
                body: Array(body(tokens).utf8)
            )
        }

        // The outcome `relay_pushes_total` gives a successful push: an Expo push is accepted, its receipt comes later.
        let success = kind == .expo ? "accepted" : "delivered"

        // Warm-up: connections, JWT, OAuth token.
        _ = await Self.drive(total: 200, concurrency: 20) { number in
            let instance = number % instances
            return try await pools[instance].send(request([token(number)], to: instance))
        }
        /// Sends to the relays in turn, counting each one's successful notifications.
        @Sendable func dealt(_ number: Int, _ tokens: [String]) async throws -> HTTP2Response {
            let instance = number % instances
            let response = try await pools[instance].send(request(tokens, to: instance))
            if Self.relaySuccess(response) { served.add(tokens.count, to: instance) }
            return response
        }

        let postgresCPU0 = Self.postgresCPUSeconds()
        let cpu0 = Self.cpuSeconds(pids: pids)
        let single =
            switch generator {
            case .h2load, .h2loadHTTP1:
                try await H2LoadGenerator.pushes(
                    url: url, key: key, body: body([token(0)]), total: requests, concurrency: concurrency,
                    http1: generator == .h2loadHTTP1, directory: directory, metrics: pool, outcome: success
                )
            case .pool:
                await Self.drive(total: requests, concurrency: concurrency) { number in
                    try await dealt(number, [token(number)])
                }
            }
        let cpu1 = Self.cpuSeconds(pids: pids)
        let postgresCPU1 = Self.postgresCPUSeconds()
        let servedBefore = served.counts
        let batched = await Self.drive(total: batches, concurrency: max(1, concurrency / 10)) { number in
            try await dealt(number, (0..<100).map { token(number * 100 + $0) })
        }
        let servedBatched = zip(served.counts, servedBefore).map { $0 - $1 }
        let cpu2 = Self.cpuSeconds(pids: pids)
        let postgresCPU2 = Self.postgresCPUSeconds()
        let paced =
            switch generator {
            case .h2load, .h2loadHTTP1:
                try await H2LoadGenerator.pushes(
                    url: url, key: key, body: body([token(0)]), total: pacedRate * pacedSeconds,
                    concurrency: concurrency, rate: pacedRate, http1: generator == .h2loadHTTP1,
                    directory: directory, metrics: pool, outcome: success
                )
            case .pool:
                await Self.pace(rate: pacedRate, seconds: pacedSeconds) { number in
                    try await dealt(number, [token(number)])
                }
            }
        let cpu3 = Self.cpuSeconds(pids: pids)
        let postgresCPU3 = Self.postgresCPUSeconds()
        let rss = pids.map { Self.peakResidentMegabytes(pid: $0) }.max() ?? 0
        // The reference for "added by the relay": the same load generator sends one-notification requests at the same
        // rate straight to the simulator (its Expo endpoint: one HTTP/2 round trip, no credentials), with the relay
        // idle.
        let directPaced: TransportBenchmark.Result
        switch generator {
        case .h2load, .h2loadHTTP1:
            // The simulator speaks HTTP/2 only, as the providers do: the reference is one HTTP/2 round trip.
            directPaced = try await H2LoadGenerator.load(
                url: upstream.directURL, headers: ["content-type: application/json"], body: upstream.directBody,
                total: pacedRate * pacedSeconds,
                concurrency: concurrency, rate: pacedRate, directory: directory
            )
        case .pool:
            let direct = try HTTP2Pool(
                configuration: .init(maxConnections: 2, maxConcurrentStreams: 100, caFile: upstream.caFile))
            let directBody = Array(upstream.directBody.utf8)
            directPaced = await Self.pace(rate: pacedRate, seconds: pacedSeconds) { _ in
                try await direct.send(
                    HTTP2Request(
                        url: upstream.directURL, headers: [HTTPHeader("content-type", "application/json")],
                        body: directBody))
            }
            await direct.shutdown()
        }
        for pool in pools { await pool.shutdown() }
        for relay in relays { relay.kill(SIGTERM) }
        for relay in relays { _ = await relay.exitStatus() }
        try await simulator.shutdown()
        _ = relay

        // Relay CPU seconds per notification in each throughput phase.
        let cpuSingle = (cpu1 - cpu0) / Double(requests)
        let cpuBatched = (cpu2 - cpu1) / Double(batches * 100)
        let singleRate = Double(single.succeeded) / single.seconds
        let batchedRate = Double(batched.succeeded * 100) / batched.seconds
        let ceilingRate = ceiling.map { Double($0.succeeded) / max($0.seconds, 1e-9) }
        var report: [String: Any] = [
            "provider": kind.rawValue,
            "upstream": upstream.directURL,
            "audit": audit,
            "store": store.hasPrefix("postgres") ? "postgres" : "sqlite",
            "generator": generator.rawValue,
            "relay_transport": relayTransport.rawValue,
            "upstream_delay_ms": upstreamDelayMs, "upstream_jitter_ms": upstreamJitterMs,
            "wait_ms": waitMs ?? 10_000,
            "single_requests": requests, "single_failed": single.failed,
            "single_requests_per_second": TransportBenchmark.rounded(singleRate, 1),
            "single_p50_ms": TransportBenchmark.rounded(single.percentile(0.5), 3),
            "single_p99_ms": TransportBenchmark.rounded(single.percentile(0.99), 3),
            "batched_requests": batches, "batched_failed": batched.failed,
            "batched_notifications_per_second": TransportBenchmark.rounded(batchedRate, 1),
            "paced_rate": pacedRate, "paced_failed": paced.failed,
            "paced_p50_ms": TransportBenchmark.rounded(paced.percentile(0.5), 3),
            "paced_p99_ms": TransportBenchmark.rounded(paced.percentile(0.99), 3),
            "direct_paced_failed": directPaced.failed,
            "direct_paced_p50_ms": TransportBenchmark.rounded(directPaced.percentile(0.5), 3),
            "direct_paced_p99_ms": TransportBenchmark.rounded(directPaced.percentile(0.99), 3),
            "paced_p50_added_ms": TransportBenchmark.rounded(paced.percentile(0.5) - directPaced.percentile(0.5), 3),
            "paced_p99_added_ms": TransportBenchmark.rounded(paced.percentile(0.99) - directPaced.percentile(0.99), 3),
            "relay_cpu_seconds_per_1000_notifications_single": TransportBenchmark.rounded(cpuSingle * 1000, 4),
            "relay_cpu_seconds_per_1000_notifications_batched": TransportBenchmark.rounded(cpuBatched * 1000, 4),
            "relay_cpu_seconds_per_1000_notifications_paced": TransportBenchmark.rounded(
                (cpu3 - cpu2) / Double(max(1, paced.succeeded + paced.failed)) * 1000, 4),
            "relay_cpu_us_per_notification_single": TransportBenchmark.rounded(cpuSingle * 1e6, 1),
            "relay_cpu_us_per_notification_batched": TransportBenchmark.rounded(cpuBatched * 1e6, 1),
            "relay_max_rss_mb": TransportBenchmark.rounded(rss, 1),
            "instances": instances,
            "batched_notifications_per_second_per_instance": servedBatched.map {
                TransportBenchmark.rounded(Double($0) / batched.seconds, 1)
            },
            "errors": single.errors.merging(batched.errors, uniquingKeysWith: +).merging(
                paced.errors, uniquingKeysWith: +),
        ]
        if postgres, let postgresCPU0, let postgresCPU1, let postgresCPU2, let postgresCPU3 {
            // PostgreSQL's own processes on this machine (backends, WAL writer, checkpointer), per notification.
            report["postgres_cpu_us_per_notification_single"] = TransportBenchmark.rounded(
                (postgresCPU1 - postgresCPU0) / Double(requests) * 1e6, 1)
            report["postgres_cpu_us_per_notification_batched"] = TransportBenchmark.rounded(
                (postgresCPU2 - postgresCPU1) / Double(batches * 100) * 1e6, 1)
            report["postgres_cpu_us_per_notification_paced"] = TransportBenchmark.rounded(
                (postgresCPU3 - postgresCPU2) / Double(max(1, paced.succeeded + paced.failed)) * 1e6, 1)
        }
        if let ceiling, let ceilingRate {
            report["ceiling_requests_per_second"] = TransportBenchmark.rounded(ceilingRate, 1)
            report["ceiling_failed"] = ceiling.failed
            report["single_ratio_to_ceiling"] = TransportBenchmark.rounded(singleRate / ceilingRate, 3)
            report["batched_ratio_to_ceiling"] = TransportBenchmark.rounded(batchedRate / ceilingRate, 3)
        }
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }

    /// Where the relay sends its pushes, and what the benchmark sends there directly (the ceiling and the latency
    /// reference): the simulator, or `--upstream`.
    struct Upstream {
        /// The relay's APNs, FCM and Expo endpoint (an origin).
        let endpoint: String
        /// The CA file the relay and the direct client trust: the simulator's, with `--upstream-ca-file` appended.
        let caFile: String
        /// What the ceiling and the direct latency reference POST to, and their body.
        let directURL: String
        let directBody: String

        init(url: String?, caFile upstreamCA: String?, simulator: ProviderSimulator, directory: String) throws {
            guard let url else {
                endpoint = simulator.baseURL
                caFile = simulator.caFilePath
                directURL = simulator.baseURL + "/--/api/v2/push/send"
                directBody = #"{"to":"ExponentPushToken[bench0]","title":"Bench","body":"Load"}"#
                return
            }
            guard let parsed = URLComponents(string: url), parsed.scheme == "https", let host = parsed.host,
                !host.isEmpty
            else {
                throw ValidationError("--upstream: an https URL (https://127.0.0.1:8443/), got \(url)")
            }
            endpoint = "https://\(host)" + (parsed.port.map { ":\($0)" } ?? "")
            directURL = url
            directBody = #"{"aps":{"alert":{"title":"Bench","body":"Load"}}}"#
            // One bundle: the simulator's CA (FCM's tokens) and the upstream's.
            var bundle = try String(contentsOfFile: simulator.caFilePath, encoding: .utf8)
            if let upstreamCA {
                bundle += "\n" + (try String(contentsOfFile: upstreamCA, encoding: .utf8))
            }
            caFile = directory + "/upstream-ca.pem"
            try bundle.write(toFile: caFile, atomically: true, encoding: .utf8)
        }
    }

    /// A relay answer counts as a success when it is a 200 whose tickets are not errors.
    static let relaySuccess: @Sendable (HTTP2Response) -> Bool = { response in
        response.status == 200 && !String(decoding: response.body, as: UTF8.self).contains(#""status":"error""#)
    }

    /// Runs `operation` `total` times with `concurrency` workers (closed loop), counting answers `accept` takes.
    static func drive(
        total: Int,
        concurrency: Int,
        accept: @escaping @Sendable (HTTP2Response) -> Bool = relaySuccess,
        _ operation: @escaping @Sendable (Int) async throws -> HTTP2Response
    ) async -> TransportBenchmark.Result {
        let next = Ticket()
        let clock = ContinuousClock()
        let start = clock.now
        // The workers are unstructured tasks awaited in turn, not a task group's children: the runtime keeps a
        // group's children in a list that it walks to detach each one that ends, so 2,000 workers ending together
        // cost a round a few milliseconds of one thread (perf, `relay-bench transport`: swift::TaskGroup::
        // removeChildTask, 2.4 % of the process's CPU, all of it in each round's last moments).
        let workers = (0..<min(concurrency, total)).map { _ in
            Task {
                var mine = TransportBenchmark.Result()
                // Each worker's share, reserved up front: the load generator's own allocations compete with what
                // it measures for the same two cores.
                mine.latenciesMs.reserveCapacity(total / max(1, concurrency) + 2)
                while true {
                    let number = next.take()
                    guard number < total else { break }
                    let sent = clock.now
                    await record(&mine, accept: accept) { try await operation(number) }
                    mine.latenciesMs.append(TransportBenchmark.milliseconds(sent.duration(to: clock.now)))
                }
                return mine
            }
        }
        var result = TransportBenchmark.Result()
        for worker in workers { result.add(await worker.value) }
        result.seconds = TransportBenchmark.milliseconds(start.duration(to: clock.now)) / 1000
        return result
    }

    /// Sends at a fixed rate (open loop), one task per request.
    static func pace(rate: Int, seconds: Int, _ operation: @escaping @Sendable (Int) async throws -> HTTP2Response)
        async -> TransportBenchmark.Result
    {
        let clock = ContinuousClock()
        let start = clock.now
        let interval = Duration.seconds(1) / rate
        var result = await withTaskGroup(of: TransportBenchmark.Result.self) { group in
            for number in 0..<(rate * seconds) {
                try? await Task.sleep(until: start + interval * number, clock: clock)
                group.addTask {
                    var mine = TransportBenchmark.Result()
                    let sent = clock.now
                    await record(&mine, accept: relaySuccess) { try await operation(number) }
                    mine.latenciesMs.append(TransportBenchmark.milliseconds(sent.duration(to: clock.now)))
                    return mine
                }
            }
            return await collect(group)
        }
        result.seconds = Double(seconds)
        return result
    }

    static func record(
        _ result: inout TransportBenchmark.Result,
        accept: (HTTP2Response) -> Bool,
        _ operation: () async throws -> HTTP2Response
    ) async {
        do {
            let response = try await operation()
            if accept(response) {
                result.succeeded += 1
            } else {
                result.failed += 1
                result.errors[Self.failureName(response), default: 0] += 1
            }
        } catch {
            result.failed += 1
            result.errors["\(error)", default: 0] += 1
        }
    }

    /// "status 429", or for a 200 with an error ticket the ticket's code ("ticket ProviderUnavailable").
    static func failureName(_ response: HTTP2Response) -> String {
        guard response.status == 200,
            case .array(let tickets)? = JSONValue.decode(response.body)?.objectValue?["data"],
            let failed = tickets.first(where: { $0.objectValue?["status"]?.stringValue == "error" }),
            let code = failed.objectValue?["details"]?.objectValue?["error"]?.stringValue
        else { return "status \(response.status)" }
        return "ticket \(code)"
    }

    static func collect(_ group: TaskGroup<TransportBenchmark.Result>) async -> TransportBenchmark.Result {
        let group = group
        var all = TransportBenchmark.Result()
        for await part in group { all.add(part) }
        return all
    }

    static func waitUntilReady(_ pool: HTTP2Pool, url: String) async throws {
        for _ in 0..<100 {
            if let response = try? await pool.send(
                HTTP2Request(method: "GET", url: url + "/readyz", timeout: .seconds(1))),
                response.status == 200
            {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the relay did not become ready")
    }

    /// User plus system CPU seconds of the processes `pids`, together.
    static func cpuSeconds(pids: [Int32]) -> Double {
        pids.reduce(0) { $0 + cpuSeconds(pid: $1) }
    }

    /// User plus system CPU seconds of every `postgres` process on this machine, from /proc (those that ended are
    /// not counted: the relays' connections stay open through a run); `nil` when there is none.
    static func postgresCPUSeconds() -> Double? {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
        var total: Double?
        for entry in entries {
            guard let pid = Int32(entry),
                let command = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
                command.trimmingCharacters(in: .whitespacesAndNewlines) == "postgres"
            else { continue }
            total = (total ?? 0) + cpuSeconds(pid: pid)
        }
        return total
    }

    /// User plus system CPU seconds of a process, from /proc.
    static func cpuSeconds(pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3; utime and stime are fields 14 and 15 (1-based in proc(5)).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func peakResidentMegabytes(pid: Int32) -> Double {
        statusMegabytes("VmHWM", of: "\(pid)")
    }

    /// A memory figure of `/proc/<process>/status` in MB (`VmHWM`: the peak resident set, `VmRSS`: the current one);
    /// `process` is a pid, or `self`. 0 when it cannot be read.
    static func statusMegabytes(_ field: String, of process: String) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return (line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) / 1024
        }
        return 0
    }
}

/// Successful notifications per relay, counted as the answers arrive.
final class PerInstanceCount: Sendable {
    private let state: Mutex<[Int]>

    init(_ instances: Int) {
        state = Mutex(Array(repeating: 0, count: instances))
    }

    var counts: [Int] { state.withLock { $0 } }

    func add(_ count: Int, to instance: Int) {
        state.withLock { $0[instance] += count }
    }
}
