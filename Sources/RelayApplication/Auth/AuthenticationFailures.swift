import RelayCore
import Synchronization

/// Failed authentications by client address, so that an address that keeps presenting bad keys is answered 429 and
/// `Retry-After` instead of 401: guessing costs the guesser time, and the relay no audit record per guess.
///
/// Only requests without a valid key are judged by their address: a request whose key (or operator token) is proved
/// good is served whatever other requests from its address did, since installs share addresses (a NAT, a cloud's
/// egress, a proxy not in `trusted_proxies`) and one of them retrying a revoked key must not silence the others. So
/// the key is checked first (a cached lookup and a constant-time comparison, ``Authenticator``), and only its
/// failure consults and feeds this table (``failed(client:now:)``).
///
/// Each address has a GCRA bucket of ``burst`` failures refilled at ``rate`` a second; one `Double` per address, in a
/// table of at most ``maximumClients`` (full, it forgets the addresses whose buckets are full again, at most once a
/// second; addresses beyond it are not limited, so the table's memory stays bounded whatever an attacker does).
package final class AuthenticationFailures: Sendable {
    /// Failures an address may make in a row.
    package static let burst = 20
    /// Failures an address earns back a second (one every 6 s: 10 a minute).
    package static let rate = 1.0 / 6
    package static let maximumClients = 10_000

    private struct State {
        var arrivals: [String: Double] = [:]
        var lastPruned = -Double.infinity
    }

    private let bucket = GCRA(rate: rate, burst: burst)
    private let state = Mutex(State())

    package init() {}

    /// The seconds until `client` may try again, or `nil` when it may now.
    package func retryAfter(client: String?, now: Double) -> Double? {
        guard let client else { return nil }
        return state.withLock { state in
            guard let arrival = state.arrivals[client] else { return nil }
            guard case .denied(let retryAfter) = bucket.check(1, now: now, arrival: arrival) else { return nil }
            return retryAfter
        }
    }

    /// Counts a request from `client` that presented no valid key, unless the address has failed too often of late.
    ///
    /// The check and the count are one step under the lock, so that concurrent failures cannot all pass the check
    /// before any is counted.
    ///
    /// - Returns: `nil` when the failure was counted (the request gets its 401), or the seconds until the address may
    ///   fail again when its bucket is empty (the request gets 429 instead, and is not counted: a refused address
    ///   earns one failure back every 6 s however fast it keeps trying).
    package func failed(client: String?, now: Double) -> Double? {
        guard let client else { return nil }
        return state.withLock { state in
            if state.arrivals[client] == nil, state.arrivals.count >= Self.maximumClients {
                guard now - state.lastPruned >= 1 else { return nil }
                state.lastPruned = now
                state.arrivals = state.arrivals.filter { $0.value > now }
                guard state.arrivals.count < Self.maximumClients else { return nil }
            }
            var arrival = state.arrivals[client] ?? 0
            if case .denied(let retryAfter) = bucket.take(1, now: now, arrival: &arrival) { return retryAfter }
            state.arrivals[client] = arrival
            return nil
        }
    }

    /// The number of addresses held (for tests of the memory bound).
    package var count: Int { state.withLock { $0.arrivals.count } }
}
