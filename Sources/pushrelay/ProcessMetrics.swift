import Foundation
import Prometheus
import RelayCore
import Synchronization

/// The process's own metrics (`process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_open_fds`,
/// `process_max_fds`, `process_start_time_seconds`, with the names Prometheus's client libraries use) and
/// `relay_build_info`, read from `/proc/self` when `/metrics` is scraped.
///
/// Hand-written: swift-prometheus exposes only what is recorded through it, and the package that reads these for
/// swift-metrics (swift-metrics-extras' SystemMetrics) is not among the relay's dependencies; reading five numbers
/// from `/proc` is shorter than a new dependency. On a system without `/proc` (macOS) the process metrics stay 0.
final class ProcessMetrics: Sendable {
    private let cpu: Prometheus.Counter
    private let resident: Prometheus.Gauge
    private let openFDs: Prometheus.Gauge
    private let maxFDs: Prometheus.Gauge
    private let startTime: Prometheus.Gauge
    /// The CPU seconds already added to the counter, which only moves forward.
    private let cpuCounted = Mutex<Double>(0)

    init(registry: PrometheusCollectorRegistry) {
        cpu = registry.makeCounter(descriptor: Self.descriptor("process_cpu_seconds_total"))
        resident = registry.makeGauge(descriptor: Self.descriptor("process_resident_memory_bytes"))
        openFDs = registry.makeGauge(descriptor: Self.descriptor("process_open_fds"))
        maxFDs = registry.makeGauge(descriptor: Self.descriptor("process_max_fds"))
        startTime = registry.makeGauge(descriptor: Self.descriptor("process_start_time_seconds"))
        registry.makeGauge(
            descriptor: Self.descriptor("relay_build_info"), labels: [("version", RelayVersion.current)]
        ).set(to: 1.0)
    }

    /// A family of ``MetricCatalogue`` by its full name (the unit already in it), with its help text.
    private static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: MetricCatalogue.help(name))
    }

    /// Reads `/proc/self` and sets the metrics.
    func record() {
        guard let sample = Self.sample() else { return }
        let added = cpuCounted.withLock { counted -> Double in
            let delta = max(0, sample.cpuSeconds - counted)
            counted += delta
            return delta
        }
        if added > 0 { cpu.increment(by: added) }
        resident.set(to: Double(sample.residentBytes))
        openFDs.set(to: Double(sample.openFDs))
        if let limit = sample.maxFDs { maxFDs.set(to: Double(limit)) }
        if let start = sample.startTime { startTime.set(to: start) }
    }

    struct Sample: Equatable {
        var cpuSeconds: Double
        var residentBytes: Int
        var openFDs: Int
        var maxFDs: Int?
        var startTime: Double?
    }

    /// One reading of `/proc/self/stat`, `/proc/self/fd`, `/proc/self/limits` and `/proc/stat`'s boot time.
    static func sample() -> Sample? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        guard let fields = parseStat(stat), ticks > 0 else { return nil }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        var limit = rlimit()
        let maxFDs = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : nil
        let bootTime = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)).flatMap(parseBootTime)
        return Sample(
            cpuSeconds: Double(fields.utime + fields.stime) / ticks,
            residentBytes: fields.rssPages * pageSize,
            openFDs: descriptors,
            maxFDs: maxFDs,
            startTime: bootTime.map { Double($0) + Double(fields.startTicks) / ticks }
        )
    }

    /// utime, stime (fields 14 and 15), starttime (22) and rss (24) of `/proc/self/stat`, counted after the command
    /// name, which is in parentheses and may hold spaces.
    static func parseStat(_ text: String) -> (utime: Int, stime: Int, startTicks: Int, rssPages: Int)? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // After ")": field 3 (state) onwards.
        let fields = text[text.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> Int? { fields.count > number - 3 ? Int(fields[number - 3]) : nil }
        guard let utime = field(14), let stime = field(15), let start = field(22), let rss = field(24) else {
            return nil
        }
        return (utime, stime, start, rss)
    }

    /// The `btime` line of `/proc/stat`: the boot time in seconds since 1970.
    static func parseBootTime(_ text: String) -> Int? {
        text.split(separator: "\n").first { $0.hasPrefix("btime ") }.flatMap { Int($0.dropFirst(6)) }
    }
}
