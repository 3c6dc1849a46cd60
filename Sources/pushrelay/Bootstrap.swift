import Foundation
import Logging
import Metrics
import Prometheus
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
