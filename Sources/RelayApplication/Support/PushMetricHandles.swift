import Metrics
import RelayCore
import Synchronization

/// The metric handles counted for every notification, each made once per label set and then reused.
///
/// `Counter(label:dimensions:)` asks the metrics factory every time: swift-prometheus validates the name and every
/// label, builds the label arrays and looks the metric up in its registry under a lock. Per notification that was about
/// 1 % of the relay's CPU in `relay-bench relay`'s batched phase. Here a notification costs one look-up under a lock.
///
/// Bounded by what the labels can take: tenants (the operator's), providers, outcomes (a fixed set) and apps (from the
/// configuration) — the same series the registry keeps anyway. Handles are made on first use, so after
/// `MetricsSystem.bootstrap`.
enum PushMetricHandles {
    private struct PushKey: Hashable {
        var tenant: String
        var provider: Provider
        var outcome: String
        var app: String
    }

    private static let pushes = Mutex<[PushKey: Counter]>([:])
    private static let upstreamDurations = Mutex<[Provider: Timer]>([:])

    /// `relay_pushes_total{tenant, provider, outcome, app}`.
    static func pushes(tenant: String, provider: Provider, outcome: String, app: String) -> Counter {
        let key = PushKey(tenant: tenant, provider: provider, outcome: outcome, app: app)
        return pushes.withLock { handles in
            if let counter = handles[key] { return counter }
            let counter = Counter(
                label: "relay_pushes_total",
                dimensions: [("tenant", tenant), ("provider", provider.rawValue), ("outcome", outcome), ("app", app)]
            )
            handles[key] = counter
            return counter
        }
    }

    /// `relay_upstream_duration_seconds{provider}`.
    static func upstreamDuration(_ provider: Provider) -> Timer {
        upstreamDurations.withLock { handles in
            if let timer = handles[provider] { return timer }
            let timer = Timer(label: "relay_upstream_duration_seconds", dimensions: [("provider", provider.rawValue)])
            handles[provider] = timer
            return timer
        }
    }
}
