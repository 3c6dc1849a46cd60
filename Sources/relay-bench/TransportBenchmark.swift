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

    @Option(help: "The pool's backend: nghttp2 (sessions over OpenSSL on the event loop) or curl (libcurl's multi interface).")
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

    func validate() throws {
        guard requests > 0, concurrency > 0, maxConnections > 0, maxStreams > 0, bodyBytes >= 0 else {
            throw ValidationError("--requests, --concurrency, --max-connections and --max-streams must be positive")
        }
    }

    func run() async throws {
        var server: HTTP2TestServer?
        var target = url
        var trust = caFile
        if target == nil {
            let started = try await HTTP2TestServer.start(
                configuration: .init(maxConcurrentStreams: serverMaxStreams)
            ) { _ in
                .respond(HTTP2TestResponse(status: 200, headers: [], body: Array("{}".utf8)))
            }
            server = started
            target = started.baseURL + "/bench"
            trust = started.caFilePath
        }
        guard let target else { return }

        let pool = try HTTP2Pool(
            configuration: .init(
                backend: transport,
                maxConnections: maxConnections,
                maxConcurrentStreams: maxStreams,
                maxQueued: max(10_000, concurrency),
                requestTimeout: .seconds(timeoutSeconds),
                caFile: trust
            )
        )
        let request = HTTP2Request(
            url: target,
            headers: [HTTPHeader("content-type", "application/json")],
            body: Array(repeating: UInt8(ascii: "x"), count: bodyBytes)
        )
        let result = await Self.drive(pool: pool, request: request, total: requests, concurrency: concurrency)
        let statistics = pool.statistics
        await pool.shutdown()

        var report: [String: Any] = [
            "transport": transport.rawValue,
            "requests": requests,
            "resets_sent": statistics.resetsSent,
            "streams_resent": statistics.streamsResent,
            "succeeded": result.succeeded,
            "failed": result.failed,
            "connections_opened": statistics.connectionsOpened,
            "seconds": Self.rounded(result.seconds, 3),
            "requests_per_second": Self.rounded(Double(result.succeeded) / result.seconds, 1),
            "p50_ms": Self.rounded(result.percentile(0.50), 3),
            "p99_ms": Self.rounded(result.percentile(0.99), 3),
            "max_rss_mb": Self.rounded(Self.peakResidentMegabytes(), 1),
        ]
        if let server {
            let seen = server.statistics
            report["server_connections"] = seen.connectionsAccepted
            report["server_max_streams_per_connection"] = seen.maxConcurrentStreamsSeen
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

        func percentile(_ p: Double) -> Double {
            guard !latenciesMs.isEmpty else { return 0 }
            let sorted = latenciesMs.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
    }

    /// Sends `request` `total` times with `concurrency` workers; a success is any 2xx answer.
    static func drive(pool: HTTP2Pool, request: HTTP2Request, total: Int, concurrency: Int) async -> Result {
        await RelayBenchmark.drive(total: total, concurrency: concurrency, accept: { (200..<300).contains($0.status) }) { _ in
            try await pool.send(request)
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    static func rounded(_ value: Double, _ places: Int) -> Double {
        let scale = pow(10, Double(places))
        return (value * scale).rounded() / scale
    }

    /// Peak resident set size of this process (VmHWM), in MB.
    static func peakResidentMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0
            return kilobytes / 1024
        }
        return 0
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
