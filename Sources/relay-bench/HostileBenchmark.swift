import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import RelayCore
import RelayHTTP2
import RelaySimulator

/// `relay-bench hostile`: what hostile callers cost the relay (issue 20). The relay runs as its own process
/// (`pushrelay serve`, TLS, HTTP/2, SQLite), so its memory (`VmHWM`, `VmRSS`) and CPU are its own. Phases:
/// - `bodies`: rounds of `--concurrent` requests at once, each a worst-case body just under 1 MiB (about 95,000
///   `{"to":"x"}` messages, every one a validation problem); the relay's peak RSS and the answers' sizes.
/// - `anonymous`: `--anonymous` requests without a valid key, each with a key id never seen before; the relay's RSS
///   before and after, and how many got 401 and how many 429.
/// - `slow`: `--slow` TLS connections that each trickle a request's headers one byte every 2 s; how long the relay
///   keeps them (its header timeout).
struct HostileBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hostile",
        abstract: "Measure the relay's memory and time under hostile callers and print them as JSON.",
        discussion: "The last line of output is one JSON object."
    )

    @Option(help: "Worst-case 1 MB bodies sent at once in each round of the bodies phase.")
    var concurrent = 8
    @Option(help: "Rounds of the bodies phase.")
    var rounds = 5
    @Option(help: "Requests with unknown key ids in the anonymous phase.")
    var anonymous = 100_000
    @Option(help: "Slow TLS connections in the slow phase.")
    var slow = 100
    @Option(help: "The pushrelay executable (default: beside relay-bench).")
    var pushrelay: String?

    func run() async throws {
        let executable = try BenchRelay.executable(pushrelay)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "relay-bench-\(UUID().uuidString.prefix(8))"
        ).path
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let credentials = try SimulatorCredentials()
        var simulatorConfiguration = credentials.simulatorConfiguration()
        simulatorConfiguration.recordsRequests = false
        let simulator = try await ProviderSimulator.start(configuration: simulatorConfiguration)
        let bench = try BenchRelay(executable: executable, directory: directory)
        try bench.configure(
            sections: """
                [store]
                url = "sqlite://relay.db"
                [audit]
                enabled = true
                instance = "bench"
                """,
            simulator: simulator, credentials: credentials)
        let key = try bench.createTenant("bench")
        let relay = try await bench.start(quiet: true)
        defer { relay.kill(SIGKILL) }
        let pid = relay.pid
        let port = bench.port
        let caFile = bench.caFile
        let url = bench.url
        // Answers up to 64 MB: before issue 20, one such body got a 25 MB answer.
        let pool = try HTTP2Pool(
            configuration: .init(
                maxConnections: 2, maxConcurrentStreams: 100, caFile: caFile, maxResponseBytes: 64 << 20))
        try await RelayBenchmark.waitUntilReady(pool, url: url)
        var report: [String: Any] = ["relay_rss_mb_start": TransportBenchmark.rounded(Self.residentMegabytes(pid), 1)]

        // Bodies: 95,000 bad messages in 1,045,000 bytes, under the 1 MiB limit.
        let messages = 95_000
        let body = Array(
            ("{\"messages\":[" + Array(repeating: #"{"to":"x"}"#, count: messages).joined(separator: ",")
                + "]}").utf8)
        var answerBytes = 0
        var statuses: [Int: Int] = [:]
        let cpu0 = RelayBenchmark.cpuSeconds(pid: pid)
        for _ in 0..<rounds {
            let answers = await withTaskGroup(of: HTTP2Response?.self) { group in
                for _ in 0..<concurrent {
                    group.addTask {
                        try? await pool.send(
                            HTTP2Request(
                                url: url + "/v1/push",
                                headers: [
                                    HTTPHeader("authorization", "Bearer \(key)"),
                                    HTTPHeader("content-type", "application/json"),
                                ],
                                body: body, timeout: .seconds(120)))
                    }
                }
                var answers: [HTTP2Response?] = []
                for await answer in group { answers.append(answer) }
                return answers
            }
            for answer in answers {
                statuses[answer?.status ?? 0, default: 0] += 1
                answerBytes = max(answerBytes, answer?.body.count ?? 0)
            }
        }
        let cpu1 = RelayBenchmark.cpuSeconds(pid: pid)
        report["bodies_request_bytes"] = body.count
        report["bodies_requests"] = rounds * concurrent
        report["bodies_concurrent"] = concurrent
        report["bodies_statuses"] = Dictionary(uniqueKeysWithValues: statuses.map { ("\($0.key)", $0.value) })
        report["bodies_largest_answer_bytes"] = answerBytes
        report["bodies_relay_cpu_seconds_per_request"] = TransportBenchmark.rounded(
            (cpu1 - cpu0) / Double(rounds * concurrent), 3)
        report["bodies_relay_peak_rss_mb"] = TransportBenchmark.rounded(
            RelayBenchmark.peakResidentMegabytes(pid: pid), 1)

        // Anonymous callers: a new key id every request.
        let rssBefore = Self.residentMegabytes(pid)
        // Every answer is counted under its status ("status 401", "status 429"), none as a success.
        let noneAccepted: @Sendable (HTTP2Response) -> Bool = { _ in false }
        let anonymousResult = await RelayBenchmark.drive(total: anonymous, concurrency: 100, accept: noneAccepted) {
            number in
            let id = String(format: "%016x", number)
            return try await pool.send(
                HTTP2Request(
                    url: url + "/v1/push",
                    headers: [
                        HTTPHeader("authorization", "Bearer prk_\(id)_" + String(repeating: "A", count: 43)),
                        HTTPHeader("content-type", "application/json"),
                    ],
                    body: Array(#"{"messages":[]}"#.utf8)))
        }
        report["anonymous_requests"] = anonymous
        report["anonymous_answers"] = anonymousResult.errors
        report["anonymous_relay_rss_mb_before"] = TransportBenchmark.rounded(rssBefore, 1)
        report["anonymous_relay_rss_mb_after"] = TransportBenchmark.rounded(Self.residentMegabytes(pid), 1)
        await pool.shutdown()

        // Slow clients: headers trickled a byte every 2 s over TLS.
        let durations = try await Self.slowClients(count: slow, port: port, caFile: caFile)
        report["slow_connections"] = slow
        report["slow_cut_off_seconds_min"] = TransportBenchmark.rounded(durations.min() ?? 0, 1)
        report["slow_cut_off_seconds_max"] = TransportBenchmark.rounded(durations.max() ?? 0, 1)
        report["relay_peak_rss_mb"] = TransportBenchmark.rounded(RelayBenchmark.peakResidentMegabytes(pid: pid), 1)

        relay.kill(SIGTERM)
        _ = await relay.exitStatus()
        try await simulator.shutdown()
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }

    /// Opens `count` TLS connections that each send a request line and then one byte of headers every 2 s, and
    /// returns how long the relay kept each (from the end of its handshake to the close), at most 120 s.
    static func slowClients(count: Int, port: Int, caFile: String) async throws -> [Double] {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(caFile)
        tls.applicationProtocols = ["http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        return try await withThrowingTaskGroup(of: Double.self) { group in
            for _ in 0..<count {
                group.addTask {
                    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .connect(host: "127.0.0.1", port: port) { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    try NIOSSLClientHandler(context: context, serverHostname: nil))
                                return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                                    wrappingChannelSynchronously: channel)
                            }
                        }
                    let start = ContinuousClock.now
                    let closed = channel.channel.closeFuture
                    try? await channel.executeThenClose { _, outbound in
                        try await outbound.write(ByteBuffer(string: "POST /v1/push HTTP/1.1\r\n"))
                        for byte in "Host: relay\r\nX-Slow: " + String(repeating: "x", count: 60) {
                            try await Task.sleep(for: .seconds(2))
                            try await outbound.write(ByteBuffer(string: String(byte)))
                        }
                    }
                    try? await closed.get()
                    let elapsed = ContinuousClock.now - start
                    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                }
            }
            var durations: [Double] = []
            for try await duration in group { durations.append(duration) }
            return durations
        }
    }

    static func residentMegabytes(_ pid: Int32) -> Double {
        RelayBenchmark.statusMegabytes("VmRSS", of: "\(pid)")
    }
}
