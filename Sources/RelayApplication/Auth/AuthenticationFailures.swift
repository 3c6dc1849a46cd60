import RelayCore
import Synchronization

/// Failed authentications by client address, so that an address that keeps presenting bad keys is refused with 429
/// and `Retry-After` before its key is looked at: guessing costs the guesser time, and the relay neither a store
/// lookup nor an audit record per guess.
///
/// Each address has a GCRA bucket of ``burst`` failures refilled at ``rate`` a second; one `Double` per address, in a
/// table of at most ``maximumClients`` (full, it forgets the addresses whose buckets are full again, at most once a
/// second; addresses beyond it are not limited, so the table's memory stays bounded whatever an attacker does). A
/// valid key from a refused address is refused too until the bucket refills: the address, not the key, is judged.
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

    /// Counts a failed authentication from `client`.
    package func failed(client: String?, now: Double) {
        guard let client else { return }
        state.withLock { state in
            if state.arrivals[client] == nil, state.arrivals.count >= Self.maximumClients {
                guard now - state.lastPruned >= 1 else { return }
                state.lastPruned = now
                state.arrivals = state.arrivals.filter { $0.value > now }
                guard state.arrivals.count < Self.maximumClients else { return }
            }
            var arrival = state.arrivals[client] ?? 0
            _ = bucket.take(1, now: now, arrival: &arrival)
            state.arrivals[client] = arrival
        }
    }

    /// The number of addresses held (for tests of the memory bound).
    package var count: Int { state.withLock { $0.arrivals.count } }
}
