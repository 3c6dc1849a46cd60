import Foundation
import Logging
import Metrics
import Prometheus
import RelayApplication
import RelayCore
import RelayHTTP2
import RelayServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Process-wide logging and metrics, bootstrapped once, here and nowhere else.
enum Bootstrap {
    static let registry = PrometheusCollectorRegistry()
    /// `process_*` and `relay_build_info`, registered on the registry itself (with their help text).
    static let processMetrics = ProcessMetrics(registry: registry)

    static func logging(format: RelayConfiguration.Logging.Format, level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                switch format {
                case .text: TextLogHandler(StreamLogHandler.standardError(label: label))
                case .json: JSONLogHandler(label: label)
                }
            handler.logLevel = level
            return handler
        }
    }

    static func metrics() {
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    }

    /// Sets the upstream pool gauges from the pools' statistics, summed per provider (read at scrape time).
    static func recordPoolGauges(_ pools: [(provider: Provider, statistics: HTTP2PoolStatistics)]) {
        for provider in Provider.allCases {
            let mine = pools.filter { $0.provider == provider }.map(\.statistics)
            let dimensions = [("provider", provider.rawValue)]
            Gauge(label: "relay_upstream_connections_open", dimensions: dimensions).record(
                mine.reduce(0) { $0 + $1.connectionsOpen })
            Gauge(label: "relay_upstream_streams_in_flight", dimensions: dimensions).record(
                mine.reduce(0) { $0 + $1.streamsInFlight })
            Gauge(label: "relay_upstream_requests_queued", dimensions: dimensions).record(
                mine.reduce(0) { $0 + $1.queued })
        }
    }

    /// The Prometheus text exposition of every metric, with the process's metrics and `# HELP` lines.
    static func exposition() -> String {
        processMetrics.record()
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return MetricCatalogue.addingHelp(to: String(decoding: buffer, as: UTF8.self))
    }
}

/// swift-log's text handler, with the logger's metadata kept here and rendered only when a line is written.
///
/// `StreamLogHandler` renders its whole metadata to text each time a key is set; a request sets three (Hummingbird's
/// request id, then removing it, then the relay's own), whether or not a line is written: 2 % of the relay's CPU for a
/// single-message request (`perf record` of `relay-bench relay`'s single phase over HTTP/1.1). Lines are unchanged:
/// the base handler is given the metadata with each line, as it would merge its own.
struct TextLogHandler: LogHandler {
    private var base: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(_ base: StreamLogHandler) {
        self.base = base
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var event = event
        if !metadata.isEmpty {
            event.metadata = metadata.merging(event.metadata ?? [:]) { $1 }
        }
        base.log(event: event)
    }
}

/// One JSON object per line on standard error: time, level, label, message and metadata.
///
/// Written here rather than taken from a library: swift-log ships only the text handler, and the mirror holds no JSON
/// handler. Numbers and booleans given as such (`.stringConvertible(200)`, `.stringConvertible(true)`) stay JSON
/// numbers and booleans, so a log collector can compare `http.status` and sum `http.duration_ms`; the time is UTC
/// with milliseconds.
struct JSONLogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info
    /// Where lines go; standard error in production, a buffer in tests.
    var write: @Sendable (Data) -> Void = { FileHandle.standardError.write($0) }
    /// The time of a line; `Date()` in production.
    var now: @Sendable () -> Date = Date.init

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: Any] = [
            "time": Self.timestamp(now()), "level": event.level.rawValue, "label": label,
            "message": "\(event.message)",
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key] = Self.json(value)
        }
        guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
        line.append(0x0A)
        write(line)
    }

    /// A metadata value as a JSON value: numbers and booleans kept, nested values kept, anything else its text.
    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): return text
        case .stringConvertible(let convertible):
            switch convertible {
            case let boolean as Bool: return boolean
            case let integer as Int: return integer
            case let integer as Int64: return integer
            case let integer as UInt64: return integer
            case let integer as Int32: return integer
            case let number as Double where number.isFinite: return number
            default: return convertible.description
            }
        case .dictionary(let dictionary): return dictionary.mapValues(json)
        case .array(let array): return array.map(json)
        }
    }

    /// `2026-11-25T03:25:51.123Z`: UTC, milliseconds.
    static func timestamp(_ date: Date) -> String {
        let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var seconds = time_t(millis / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(millis % 1000), 3))Z"
    }
}
