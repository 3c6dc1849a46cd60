import ArgumentParser
import Foundation
import RelayCore
import RelayHTTP2

/// The single-message and paced phases driven by h2load (nghttp2's load generator) rather than by `HTTP2Pool`.
///
/// Everything runs on one machine, so the load generator's own CPU time is taken from the relay; h2load costs the
/// least per request of any generator here. h2load sends the same body every time (one token)
/// and cannot read the tickets, so a request counts as a success only when the relay's own `relay_pushes_total` shows
/// one more delivered push for it (for Expo, one more accepted: its receipt comes minutes later); latencies come from
/// h2load's per-request log. The paced phase's reference (the simulator alone) is driven by h2load too, so that
/// "added by the relay" compares like with like.
enum H2LoadGenerator {
    /// Sends one-notification push requests to the relay: `total` of them, closed loop over `concurrency` streams
    /// when `rate` is nil, otherwise at `rate` requests a second (open loop). A success is a push the relay counts
    /// with `outcome` (`delivered`; `accepted` for Expo, whose outcome comes with a receipt minutes later).
    static func pushes(
        url: String,
        key: String,
        body: String,
        total: Int,
        concurrency: Int,
        rate: Int? = nil,
        http1: Bool = false,
        directory: String,
        metrics: HTTP2Pool,
        outcome: String = "delivered"
    ) async throws -> TransportBenchmark.Result {
        let delivered0 = try await delivered(metrics, url: url, outcome: outcome)
        var result = try await load(
            url: url + "/v1/push",
            headers: ["authorization: Bearer \(key)", "content-type: application/json"],
            body: body, total: total, concurrency: concurrency, rate: rate, http1: http1, directory: directory
        )
        let delivered1 = try await delivered(metrics, url: url, outcome: outcome)
        result.succeeded = min(total, max(0, delivered1 - delivered0))
        result.failed = total - result.succeeded
        if result.failed > 0 && result.errors.isEmpty {
            result.errors["not \(outcome) (relay_pushes_total)"] = result.failed
        }
        return result
    }

    /// Runs h2load against `url` and reads its per-request log; a success is a 2xx answer.
    ///
    /// HTTP/2 (the default) over 2 connections, `concurrency` streams in all; with `http1`, HTTP/1.1 with keep-alive
    /// over `concurrency` connections, one request at a time on each (h2load `--h1` without pipelining), or paced
    /// over one connection per 100 requests a second.
    static func load(
        url: String,
        headers: [String],
        body: String,
        total: Int,
        concurrency: Int,
        rate: Int? = nil,
        http1: Bool = false,
        directory: String
    ) async throws -> TransportBenchmark.Result {
        guard let h2load = executable("h2load") else {
            throw ValidationError("--generator h2load: no h2load on PATH (Debian: apt-get install nghttp2-client)")
        }
        let bodyPath = directory + "/h2load-body.json"
        let logPath = directory + "/h2load.log"
        try body.write(toFile: bodyPath, atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: logPath)
        // Over HTTP/1.1 each connection carries one request at a time. Paced, h2load starts every connection's
        // `--rps` timer at once, so the connections' requests arrive together: one connection per 100 requests a
        // second keeps those bursts to a few requests 10 ms apart, rather than `concurrency` at once.
        let connections: Int
        switch (http1, rate) {
        case (false, _): connections = 2
        case (true, nil): connections = max(1, min(concurrency, total))
        case (true, let rate?): connections = max(1, min(concurrency, rate / 100))
        }
        var arguments = ["-n", "\(total)", "-c", "\(connections)", "-d", bodyPath, "--log-file", logPath]
        if http1 { arguments.append("--h1") }
        if let rate {
            // --rps is per connection; over HTTP/2 each connection keeps as many streams open as the rate needs.
            arguments += ["--rps", "\(max(1, rate / connections))"]
        } else if !http1 {
            arguments += ["-m", "\(max(1, concurrency / connections))"]
        }
        for header in headers { arguments += ["-H", header] }
        let status = try await run(h2load, arguments + [url])
        guard status == 0 else { throw ValidationError("h2load exited with status \(status)") }

        // Each line: start (µs since the epoch), HTTP status, duration (µs).
        var result = TransportBenchmark.Result()
        var first = Double.infinity
        var last = 0.0
        for line in try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count >= 3, let start = Double(fields[0]), let code = Int(fields[1]),
                let duration = Double(fields[2])
            else {
                continue
            }
            first = min(first, start)
            last = max(last, start + duration)
            result.latenciesMs.append(duration / 1000)
            if (200..<300).contains(code) {
                result.succeeded += 1
            } else {
                result.errors["status \(code)", default: 0] += 1
            }
        }
        let answered = result.latenciesMs.count
        if answered < total { result.errors["no answer", default: 0] += total - answered }
        result.failed = total - result.succeeded
        result.seconds = last > first ? (last - first) / 1_000_000 : 0
        return result
    }

    /// The relay's count of pushes with `outcome` (delivered, or accepted by Expo), from its Prometheus metrics.
    static func delivered(_ pool: HTTP2Pool, url: String, outcome: String) async throws -> Int {
        let response = try await pool.send(HTTP2Request(method: "GET", url: url + "/metrics", timeout: .seconds(5)))
        var count = 0.0
        for line in String(decoding: response.body, as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("relay_pushes_total{") && line.contains(#"outcome="\#(outcome)""#) {
            count += line.split(separator: " ").last.flatMap { Double($0) } ?? 0
        }
        return Int(count)
    }

    /// Runs a program to its end without blocking a thread (Foundation's `waitUntilExit` spins a run loop on Linux,
    /// which would take a core from the benchmark).
    static func run(_ executable: String, _ arguments: [String], standardOutput: FileHandle = .nullDevice) async throws
        -> Int32
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = standardOutput
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
    }

    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}
