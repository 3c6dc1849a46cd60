import Foundation
import Logging
import Metrics
import Prometheus
import RelayApplication
import RelayCore
import RelayHTTP2
import RelayServer

/// Process-wide logging and metrics, bootstrapped once, here and nowhere else.
enum Bootstrap {
    static let registry = PrometheusCollectorRegistry()

    static func logging(format: RelayConfiguration.Logging.Format, level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                switch format {
                case .text: StreamLogHandler.standardError(label: label)
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

    /// The Prometheus text exposition of every metric.
    static func exposition() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }
}

/// One JSON object per line on standard error: time, level, label, message and metadata.
struct JSONLogHandler: LogHandler {
    let label: String
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: Any] = [
            "time": ISO8601DateFormatter().string(from: Date()), "level": event.level.rawValue, "label": label,
            "message": "\(event.message)",
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key] = "\(value)"
        }
        guard var line = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]) else { return }
        line.append(0x0A)
        FileHandle.standardError.write(line)
    }
}
