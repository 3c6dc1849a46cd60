import Metrics
import Synchronization

/// The handles of `relay_http_requests_total` and `relay_http_request_duration_seconds`, one pair per route template
/// and status, made on first use and reused.
///
/// Making a `Counter` or `Timer` asks the metrics factory every time (a lock, a look-up by name and labels, an
/// allocation): per request, the two were about 2 % of the relay's CPU for a single-message request (`perf record`
/// of `relay-bench relay`'s single-message phase). Routes are the router's templates and statuses the relay's own,
/// so the pairs are few; past ``maximumPairs`` (which only a bug could reach) handles are made per request again
/// rather than kept, so memory stays bounded.
final class HTTPRequestMetrics: Sendable {
    struct Handles: Sendable {
        let requests: Counter
        let duration: Timer
    }

    private struct Key: Hashable {
        var route: String
        var status: Int
    }

    static let maximumPairs = 1_024

    private let cache = Mutex<[Key: Handles]>([:])

    func handles(route: String, status: Int) -> Handles {
        let key = Key(route: route, status: status)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let made = Handles(
            requests: Counter(
                label: "relay_http_requests_total", dimensions: [("route", route), ("status", "\(status)")]),
            duration: Timer(
                label: "relay_http_request_duration_seconds",
                dimensions: [("route", route), ("status_class", "\(status / 100)xx")],
                preferredDisplayUnit: .seconds
            )
        )
        return cache.withLock { cache in
            if let cached = cache[key] { return cached }
            if cache.count < Self.maximumPairs { cache[key] = made }
            return made
        }
    }
}
