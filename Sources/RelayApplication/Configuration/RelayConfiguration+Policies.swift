package import Logging

extension RelayConfiguration {
    /// `[receipts]`: how long delivery receipts are kept, and how long a push request waits for outcomes.
    package struct Receipts: Sendable, Equatable {
        /// `ttl_hours`: hours a delivery receipt stays available for lookup.
        package var ttlHours: Int
        /// `wait_ms`: the longest a push request waits for the providers' outcomes before it answers; outcomes that
        /// arrive later are still recorded on the receipt.
        package var requestDeadlineMs: Int

        package init(ttlHours: Int = 72, requestDeadlineMs: Int = 10_000) {
            self.ttlHours = ttlHours
            self.requestDeadlineMs = requestDeadlineMs
        }

        /// The shortest `wait_ms` accepted.
        static let minimumRequestDeadlineMs = 100
    }

    /// `[logging]`: the log format and level.
    package struct Logging: Sendable, Equatable {
        /// `format`: how log lines are written.
        package var format: Format
        /// `level`: the lowest level logged.
        package var level: Logger.Level

        package init(format: Format = .text, level: Logger.Level = .info) {
            self.format = format
            self.level = level
        }

        /// How log lines are written.
        package enum Format: String, Sendable, Equatable, CaseIterable {
            /// Human-readable lines.
            case text
            /// One JSON object per line, for log collectors.
            case json
        }
    }
}
