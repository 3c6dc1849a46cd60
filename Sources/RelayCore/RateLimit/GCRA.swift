/// A token bucket in its GCRA form (the generic cell rate algorithm): one instant, the theoretical arrival time, is
/// all the state.
///
/// With emission interval `T = 1 / rate` and room for `burst` cells, a request of `n` cells fits when the new
/// theoretical arrival time `max(tat, now) + n·T` is no further ahead of `now` than `burst·T`. Time is an input, in
/// seconds on any monotonic or wall scale the caller keeps using.
package struct GCRA: Sendable, Equatable {
    package let rate: Double
    package let burst: Int
    /// Slack for floating-point error: UNIX seconds as a Double carry about 2.4e-7 s of rounding.
    private static let tolerance = 1e-6
    private(set) var theoreticalArrival: Double = 0

    package init(rate: Double, burst: Int) {
        self.rate = max(rate, .leastNonzeroMagnitude)
        self.burst = max(1, burst)
    }

    private var interval: Double { 1 / rate }
    private var capacity: Double { Double(burst) * interval }

    package enum Decision: Sendable, Equatable {
        /// Admitted; `remaining` cells could still be taken now.
        case allowed(remaining: Int)
        /// Refused; the same request fits after `retryAfter` seconds.
        case denied(retryAfter: Double)
    }

    /// Takes `cells` if they fit now; takes nothing otherwise.
    package mutating func take(_ cells: Int, now: Double) -> Decision {
        var arrival = theoreticalArrival
        let decision = take(cells, now: now, arrival: &arrival)
        theoreticalArrival = arrival
        return decision
    }

    /// ``take(_:now:)`` for one of many buckets with this rate and burst, whose only state, its theoretical arrival
    /// time (0 for a full bucket never used), the caller keeps: a table of them costs one `Double` a bucket.
    package func take(_ cells: Int, now: Double, arrival: inout Double) -> Decision {
        let decision = check(cells, now: now, arrival: arrival)
        if case .allowed = decision {
            arrival = max(arrival, now) + Double(cells) * interval
        }
        return decision
    }

    /// Whether `cells` would fit now, without taking them.
    package func check(_ cells: Int, now: Double) -> Decision {
        check(cells, now: now, arrival: theoreticalArrival)
    }

    /// ``check(_:now:)`` for one of many buckets whose theoretical arrival time the caller keeps.
    package func check(_ cells: Int, now: Double, arrival: Double) -> Decision {
        let next = max(arrival, now) + Double(cells) * interval
        let ahead = next - now
        if ahead <= capacity + Self.tolerance {
            return .allowed(remaining: max(0, Int(((capacity - ahead + Self.tolerance) / interval).rounded(.down))))
        }
        if Double(cells) * interval > capacity + Self.tolerance {
            // More than the whole burst at once can never fit.
            return .denied(retryAfter: .infinity)
        }
        return .denied(retryAfter: ahead - capacity)
    }

    /// Cells that could be taken at `now`.
    package func remaining(now: Double) -> Int {
        if case .allowed(let remaining) = check(0, now: now) { return remaining }
        return 0
    }

    /// Seconds until the bucket is full again.
    package func secondsUntilFull(now: Double) -> Double {
        max(0, theoreticalArrival - now)
    }

    /// Whether the bucket is full (its state carries no information and may be dropped).
    package func isIdle(now: Double) -> Bool {
        Self.isIdle(arrival: theoreticalArrival, now: now)
    }

    /// Whether a bucket kept as its theoretical arrival time (``take(_:now:arrival:)``) is full.
    package static func isIdle(arrival: Double, now: Double) -> Bool {
        arrival <= now
    }
}
