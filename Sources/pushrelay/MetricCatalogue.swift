/// Every metric family the relay exposes, with its type, labels and help text: the one list that `/metrics`'s
/// `# HELP` lines, Docs/api.md's table and their test are checked against.
///
/// Hand-written because swift-metrics' API (`Counter(label:dimensions:)`) has no help text, and swift-prometheus's
/// `PrometheusMetricsFactory` registers every family with an empty one; registering a family on the registry with
/// help first is no way out, as the registry stops the process when the factory then registers it without. So the
/// help lines are added to the exposition text, before each family's `# TYPE` line, from this list.
enum MetricCatalogue {
    struct Family: Equatable {
        var name: String
        /// `counter`, `gauge` or `histogram`, as `# TYPE` says.
        var type: String
        var labels: [String]
        var help: String
    }

    static let families: [Family] = [
        Family(
            name: "relay_http_requests_total", type: "counter", labels: ["route", "status"],
            help: "Requests answered, by route template and status code."),
        Family(
            name: "relay_http_request_duration_seconds", type: "histogram", labels: ["route", "status_class"],
            help: "Time from a request's arrival to its response, by route template and status class (2xx, 4xx, …)."),
        Family(
            name: "relay_http_connections_open", type: "gauge", labels: [],
            help: "Connections open to the relay's listener (plain and TLS), at most [server] max_connections."),
        Family(
            name: "relay_http_connections_refused_total", type: "counter", labels: [],
            help:
                "Connections refused because [server] max_connections were open (503 TOO_MANY_CONNECTIONS, or closed)."),
        Family(
            name: "relay_http_client_timeouts_total", type: "counter", labels: ["phase"],
            help:
                "Connections (HTTP/1.1) or streams (HTTP/2) closed because the client sent its headers or body too slowly."
        ),
        Family(
            name: "relay_pushes_total", type: "counter", labels: ["tenant", "provider", "outcome", "app"],
            help: "Notifications concluded, by tenant id, provider, outcome and app ([apps.<name>], or default)."),
        Family(
            name: "relay_rate_limited_total", type: "counter", labels: ["reason"],
            help: "Requests refused by a limit: rate, daily_quota or receipt_lookups."),
        Family(
            name: "relay_critical_beyond_limits_total", type: "counter", labels: ["tenant"],
            help:
                "Critical alerts sent beyond the tenant's bucket, quota or per-device limit, from its critical reserve, by tenant id."
        ),
        Family(
            name: "relay_critical_reserve_exhausted_total", type: "counter", labels: ["tenant"],
            help: "Critical alerts refused because the tenant's critical reserve for the hour was spent, by tenant id."),
        Family(
            name: "relay_queue_full_total", type: "counter", labels: [],
            help: "Push requests refused because the delivery queue was full (503 QUEUE_FULL)."),
        Family(
            name: "relay_receipts_pending", type: "gauge", labels: [],
            help: "Expo receipts waiting to be asked for."),
        Family(
            name: "relay_upstream_duration_seconds", type: "histogram", labels: ["provider"],
            help: "Time of one upstream request to APNs, FCM or Expo."),
        Family(
            name: "relay_upstream_retries_total", type: "counter", labels: ["provider", "cause"],
            help: "Upstream sends tried again, by provider and cause."),
        Family(
            name: "relay_upstream_timeouts_total", type: "counter", labels: ["provider"],
            help: "Upstream requests sent and not answered within [upstream] timeout_ms, per provider."),
        Family(
            name: "relay_upstream_circuit_state", type: "gauge", labels: ["provider"],
            help: "Each provider's circuit: 0 closed, 1 half-open, 2 open."),
        Family(
            name: "relay_upstream_connections_open", type: "gauge", labels: ["provider"],
            help: "HTTP/2 connections open to each provider."),
        Family(
            name: "relay_upstream_streams_in_flight", type: "gauge", labels: ["provider"],
            help: "Upstream requests on the wire, per provider."),
        Family(
            name: "relay_upstream_requests_queued", type: "gauge", labels: ["provider"],
            help: "Upstream requests waiting for a connection, per provider."),
        Family(
            name: "relay_store_commits_total", type: "counter", labels: [],
            help: "Group commits written to the store."),
        Family(
            name: "relay_store_commit_failures_total", type: "counter", labels: [],
            help: "Group commits the store refused."),
        Family(
            name: "relay_store_commit_writes", type: "histogram", labels: [],
            help: "Writes (receipts, updates, usage, audit records) per group commit."),
        Family(
            name: "relay_store_commit_duration_seconds", type: "histogram", labels: [],
            help: "Time of one group commit."),
        Family(
            name: "relay_store_unsaved_writes", type: "gauge", labels: [],
            help: "Writes of failed commits held in memory until the store takes them ([store] unsaved_limit)."),
        Family(
            name: "relay_store_request_timeouts_total", type: "counter", labels: [],
            help: "Writes withdrawn because no commit took them within [store] request_timeout_ms."),
        Family(
            name: "relay_journal_entries", type: "gauge", labels: [],
            help: "Notifications in the delivery journal (not yet final)."),
        Family(
            name: "relay_journal_oldest_age_seconds", type: "gauge", labels: [],
            help: "Age of the oldest delivery journal entry."),
        Family(
            name: "relay_journal_resumed_total", type: "counter", labels: ["action"],
            help: "Journaled notifications resumed: sent again, or concluded without sending."),
        Family(
            name: "relay_build_info", type: "gauge", labels: ["version"],
            help: "Always 1; the version label names the running build."),
        Family(
            name: "process_cpu_seconds_total", type: "counter", labels: [],
            help: "User and system CPU time of the process, in seconds."),
        Family(
            name: "process_resident_memory_bytes", type: "gauge", labels: [],
            help: "Resident memory of the process, in bytes."),
        Family(
            name: "process_open_fds", type: "gauge", labels: [],
            help: "Open file descriptors of the process."),
        Family(
            name: "process_max_fds", type: "gauge", labels: [],
            help: "The process's limit of open file descriptors."),
        Family(
            name: "process_start_time_seconds", type: "gauge", labels: [],
            help: "Start time of the process, in seconds since 1970."),
    ]

    static let byName: [String: Family] = Dictionary(uniqueKeysWithValues: families.map { ($0.name, $0) })

    /// The help text of a family in the list.
    static func help(_ name: String) -> String { byName[name]?.help ?? "" }

    /// `text` with a `# HELP` line before each family's `# TYPE` line that has none.
    static func addingHelp(to text: String) -> String {
        var lines: [Substring] = []
        var previous: Substring = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), !previous.hasPrefix("# HELP ") {
                let name = line.dropFirst("# TYPE ".count).prefix { $0 != " " }
                if let family = byName[String(name)] { lines.append("# HELP \(name) \(family.help)") }
            }
            lines.append(line)
            previous = line
        }
        return lines.joined(separator: "\n")
    }
}
