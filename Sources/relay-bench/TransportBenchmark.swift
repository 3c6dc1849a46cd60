import ArgumentParser
import Foundation
import RelayHTTP2
import RelaySimulator
import Synchronization

/// `relay-bench transport`: N POSTs through one RelayHTTP2 pool at a fixed concurrency.
struct TransportBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transport",
        abstract: "Send N POSTs through the HTTP/2 pool and print throughput, latency and memory as JSON.",
        discussion: """
            Without --url, starts the built-in loopback HTTP/2-over-TLS server (RelaySimulator) and sends to it. \
            With --url, sends to any HTTP/2 server, such as nghttpd (pass its certificate with --ca-file). \
            The last line of output is one JSON object.
            """
    )

    @Option(
        help:
            "The pool's backend: nghttp2 (sessions over OpenSSL on the event loop) or curl (libcurl's multi interface)."
    )
    var transport: HTTP2Backend = .nghttp2

    @Option(help: "Target URL (https). Default: the built-in server.")
    var url: String?

    @Option(help: "Requests to send in all.")
    var requests = 20_000

    @Option(help: "Requests in flight at once.")
    var concurrency = 2_000

    @Option(help: "Connections the pool may open.")
    var maxConnections = 2

    @Option(help: "Streams per connection the pool may use (the server's limit applies too).")
    var maxStreams = 1_000

    @Option(help: "Extra CA certificate (PEM) to trust for --url.")
    var caFile: String?

    @Option(help: "Request body size in bytes.")
    var bodyBytes = 256

    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS of the built-in server.")
    var serverMaxStreams = 1_000

    @Option(help: "Per-request timeout in seconds.")
    var timeoutSeconds = 60

    @Option(
        help:
            "Rounds: each sends --requests through the pool (and through h2load with --h2load-reference); the report gives the median round."
    )
    var rounds = 1

    @Flag(
        help:
            "Measure h2load (nghttp2-client) against the same URL in the same run, alternating with the pool, with the same connections, streams per connection, request count and body; reports the ratio."
    )
    var h2loadReference = false

    @Flag(
        help:
            "The built-in server answers each request as soon as its HEADERS arrive and then resets the stream with NO_ERROR, as nginx does (RFC 9113 §8.1)."
    )
    var serverAnswersBeforeBody = false

    func validate() throws {
        guard requests > 0, concurrency > 0, maxConnections > 0, maxStreams > 0, bodyBytes >= 0, rounds > 0 else {
            throw ValidationError(
                "--requests, --concurrency, --max-connections, --max-streams and --rounds must be positive")
        }
        if h2loadReference && H2LoadGenerator.executable("h2load") == nil {
            throw ValidationError("--h2load-reference: no h2load on PATH (Debian: apt-get install nghttp2-client)")
        }
    }

    func run() async throws {
        var server: HTTP2TestServer?
        var target = url
        var trust = caFile
        if target == nil {
            let started = try await HTTP2TestServer.start(
                configuration: .init(maxConcurrentStreams: serverMaxStreams, answerBeforeBody: serverAnswersBeforeBody)
            ) { _ in
                .respond(HTTP2TestResponse(status: 200, headers: [], body: Array("{}".utf8)))
            }
            server = started
            target = started.baseURL + "/bench"
            trust = started.caFilePath
        }
        guard let target else { return }

        let configuration = HTTP2PoolConfiguration(
            backend: transport,
            maxConnections: maxConnections,
            maxConcurrentStreams: maxStreams,
            maxQueued: max(10_000, concurrency),
            requestTimeout: .seconds(timeoutSeconds),
            caFile: trust
        )
        let request = HTTP2Request(
            url: target,
            headers: [HTTPHeader("content-type", "application/json")],
            body: Array(repeating: UInt8(ascii: "x"), count: bodyBytes)
        )
        var poolRounds: [Result] = []
        var statistics = HTTP2PoolStatistics()
        var connectionsOpened = 0
        var referenceRounds: [Double] = []
        for _ in 0..<rounds {
            if h2loadReference {
                referenceRounds.append(
                    try await Self.h2load(
                        url: target, requests: requests, connections: maxConnections, streams: maxStreams,
                        bodyBytes: bodyBytes))
            }
            // A new pool each round: it connects, as h2load does in each of its runs.
            let pool = try HTTP2Pool(configuration: configuration)
            let cpuBefore = Self.processCPUSeconds()
            var round = await Self.drive(pool: pool, request: request, total: requests, concurrency: concurrency)
            round.cpuSeconds = Self.processCPUSeconds() - cpuBefore
            poolRounds.append(round)
            let counted = pool.statistics
            statistics.resetsSent += counted.resetsSent
            statistics.streamsResent += counted.streamsResent
            connectionsOpened = max(connectionsOpened, counted.connectionsOpened)
            await pool.shutdown()
        }
        if h2loadReference {
            referenceRounds.append(
                try await Self.h2load(
                    url: target, requests: requests, connections: maxConnections, streams: maxStreams,
                    bodyBytes: bodyBytes))
        }
        let byRate = poolRounds.sorted { Double($0.succeeded) / $0.seconds < Double($1.succeeded) / $1.seconds }
        let result = byRate[byRate.count / 2]

        var report: [String: Any] = [
            "transport": transport.rawValue,
            "requests": requests,
            "resets_sent": statistics.resetsSent,
            "streams_resent": statistics.streamsResent,
            "succeeded": result.succeeded,
            "failed": result.failed,
            "connections_opened": connectionsOpened,
            "seconds": Self.rounded(result.seconds, 3),
            "requests_per_second": Self.rounded(Double(result.succeeded) / result.seconds, 1),
            "p50_ms": Self.rounded(result.percentile(0.50), 3),
            "p99_ms": Self.rounded(result.percentile(0.99), 3),
            "max_rss_mb": Self.rounded(Self.peakResidentMegabytes(), 1),
            "cpu_us_per_request": Self.rounded(Self.median(poolRounds.map(\.cpuMicrosecondsPerRequest)), 2),
        ]
        if rounds > 1 {
            report["rounds"] = rounds
            report["requests_per_second_each_round"] = poolRounds.map {
                Self.rounded(Double($0.succeeded) / $0.seconds, 1)
            }
            report["failed"] = poolRounds.reduce(0) { $0 + $1.failed }
            report["cpu_us_per_request_each_round"] = poolRounds.map { Self.rounded($0.cpuMicrosecondsPerRequest, 2) }
        }
        if h2loadReference {
            let reference = Self.median(referenceRounds)
            report["h2load_requests_per_second"] = Self.rounded(reference, 1)
            report["h2load_requests_per_second_each_round"] = referenceRounds.map { Self.rounded($0, 1) }
            report["ratio_to_h2load"] = Self.rounded(Double(result.succeeded) / result.seconds / reference, 3)
        }
        if let server {
            let seen = server.statistics
            report["server_connections"] = seen.connectionsAccepted
            report["server_max_streams_per_connection"] = seen.maxConcurrentStreamsSeen
            report["server_resets_received"] = seen.resetsReceived
            report["server_resets_received_after_response"] = seen.resetsReceivedAfterResponse
            try await server.shutdown()
        }
        if !result.errors.isEmpty {
            report["errors"] = result.errors
        }
        let data = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: data, as: UTF8.self))
    }

    struct Result {
        var succeeded = 0
        var failed = 0
        var errors: [String: Int] = [:]
        var latenciesMs: [Double] = []
        var seconds = 0.0
        /// CPU time of the whole process (load generator and transport threads) while the round ran.
        var cpuSeconds = 0.0

        var cpuMicrosecondsPerRequest: Double {
            succeeded + failed == 0 ? 0 : cpuSeconds * 1e6 / Double(succeeded + failed)
        }

        /// Adds another worker's counts and latencies to these.
        mutating func add(_ part: Result) {
            succeeded += part.succeeded
            failed += part.failed
            latenciesMs += part.latenciesMs
            errors.merge(part.errors, uniquingKeysWith: +)
        }

        func percentile(_ p: Double) -> Double {
            guard !latenciesMs.isEmpty else { return 0 }
            let sorted = latenciesMs.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
    }

    /// A transport answer counts as a success when it is a 2xx.
    static let anySuccess: @Sendable (HTTP2Response) -> Bool = { (200..<300).contains($0.status) }

    /// Sends `request` `total` times with `concurrency` workers; a success is any 2xx answer.
    /// Each request is built anew, as a relay builds each push's: one request value shared by every sender would have
    /// all threads update the reference counts of the same few buffers.
    static func drive(pool: HTTP2Pool, request: HTTP2Request, total: Int, concurrency: Int) async -> Result {
        let url = request.url
        let headers = request.headers
        let body = request.body
        return await RelayBenchmark.drive(total: total, concurrency: concurrency, accept: anySuccess) { _ in
            // Built in the call: the pool takes the request over rather than copying it.
            try await pool.send(
                HTTP2Request(url: url, headers: headers, body: body.withUnsafeBufferPointer { Array($0) }))
        }
    }

    /// h2load's requests/s against `url`: the same number of requests, connections, streams per connection and body
    /// size. The rate is h2load's own summary ("finished in …, N req/s"), which counts from its first connect, as the
    /// pool's rounds do.
    static func h2load(url: String, requests: Int, connections: Int, streams: Int, bodyBytes: Int) async throws
        -> Double
    {
        guard let h2load = H2LoadGenerator.executable("h2load") else { throw ValidationError("no h2load on PATH") }
        let directory = FileManager.default.temporaryDirectory.path + "/relay-bench-h2load-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bodyPath = directory + "/body"
        let outputPath = directory + "/output"
        try Data(repeating: UInt8(ascii: "x"), count: bodyBytes).write(to: URL(fileURLWithPath: bodyPath))
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        let status = try await H2LoadGenerator.run(
            h2load,
            ["-n", "\(requests)", "-c", "\(connections)", "-m", "\(streams)", "-d", bodyPath, url],
            standardOutput: output
        )
        try output.close()
        let text = try String(contentsOfFile: outputPath, encoding: .utf8)
        guard status == 0, text.contains("\(requests) succeeded") else {
            throw ValidationError("h2load did not complete every request (exit \(status)):\n\(text)")
        }
        // "finished in 79.36ms, 252025.66 req/s, 7.48MB/s"
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }),
            let field = line.split(separator: ",").first(where: { $0.hasSuffix("req/s") }),
            let rate = Double(field.dropLast("req/s".count).trimmingCharacters(in: .whitespaces))
        else {
            throw ValidationError("h2load's summary not understood:\n\(text)")
        }
        return rate
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    static func rounded(_ value: Double, _ places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }

    /// CPU seconds this process has used, every thread (CLOCK_PROCESS_CPUTIME_ID: nanoseconds, not /proc's ticks).
    static func processCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The upper median (the middle value of an odd count), as the report's rounds use; 0 for none.
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        return values.sorted()[values.count / 2]
    }

    /// Peak resident set size of this process (VmHWM), in MB.
    static func peakResidentMegabytes() -> Double {
        RelayBenchmark.statusMegabytes("VmHWM", of: "self")
    }
}

extension HTTP2Backend: ExpressibleByArgument {}

/// Hands out consecutive request numbers to the workers.
final class Ticket: Sendable {
    private let counter = Atomic<Int>(0)

    func take() -> Int {
        counter.add(1, ordering: .relaxed).oldValue
    }
}
