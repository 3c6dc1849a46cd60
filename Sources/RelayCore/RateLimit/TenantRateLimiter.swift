/// A tenant's limits: notifications per second with a burst, a daily quota, a limit per device token, and the
/// critical alerts it may send beyond all three.
package struct RateLimits: Sendable, Equatable, Codable {
    package var ratePerSecond: Double
    package var burst: Int
    /// Notifications per UTC day.
    package var dailyQuota: Int
    /// Notifications per device token per minute: the brake on runaway loops.
    package var perDevicePerMinute: Int
    /// Critical notifications per UTC clock hour admitted beyond the bucket, the daily quota and the per-device
    /// limit, so that a page gets through after a storm has spent them; 0: a critical beyond those limits is refused
    /// like any notification.
    package var criticalReservePerHour: Int

    package init(
        ratePerSecond: Double = 10,
        burst: Int = 100,
        dailyQuota: Int = 100_000,
        perDevicePerMinute: Int = 30,
        criticalReservePerHour: Int = 120
    ) {
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.dailyQuota = dailyQuota
        self.perDevicePerMinute = perDevicePerMinute
        self.criticalReservePerHour = criticalReservePerHour
    }

    private enum CodingKeys: String, CodingKey {
        case ratePerSecond, burst, dailyQuota, perDevicePerMinute, criticalReservePerHour
    }

    /// Reads limits written before there was a critical reserve too: without `criticalReservePerHour`, the default.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            ratePerSecond: try container.decode(Double.self, forKey: .ratePerSecond),
            burst: try container.decode(Int.self, forKey: .burst),
            dailyQuota: try container.decode(Int.self, forKey: .dailyQuota),
            perDevicePerMinute: try container.decode(Int.self, forKey: .perDevicePerMinute)
        )
        criticalReservePerHour =
            try container.decodeIfPresent(Int.self, forKey: .criticalReservePerHour) ?? criticalReservePerHour
    }
}

/// The rate-limit decisions for one tenant. Pure: time comes in as UNIX seconds.
///
/// A request is admitted whole or refused whole: its notifications must fit both the token bucket and the day's
/// quota, or nothing is taken and nothing is sent. Within an admitted request, each notification is checked against
/// its device token's own bucket; a token over its limit gets `MessageRateExceeded` for that notification alone.
///
/// The day's quota counts every notification admitted on that UTC day. It starts at 0, or at what an owner that
/// keeps the count elsewhere (the store) says was used before (``seedQuota(used:now:)``): an owner that seeds asks
/// ``knowsQuota(at:)`` before each admission, so that it seeds once per day and then counts here alone.
package struct TenantRateLimiter: Sendable {
    package private(set) var limits: RateLimits
    private var bucket: GCRA
    /// The UTC day ``usedToday`` counts (``day(of:)``); -1 before the first.
    private var day: Int64 = -1
    private var usedToday = 0
    /// The per-device buckets that are not full: each one's theoretical arrival time, by device. Every device shares
    /// the tenant's per-minute rate, so only that instant is kept, under a 64-bit hash of the device's fingerprint:
    /// about 20 bytes a device instead of about 150 with the fingerprint text and a whole ``GCRA``, which matters
    /// because the table holds every device pushed to in the last minute (over a million at 20,000 a second).
    /// Hashes come from Swift's `Hasher`, seeded per process, so nobody can choose tokens that collide; two devices
    /// of one tenant share a bucket with probability about n²/2⁶⁵ (3·10⁻⁸ for a million devices in a minute).
    private var devices: [Int: Double] = [:]
    /// The same for critical alerts, which have a per-device limit of their own
    /// (``admitCriticalDevice(_:now:perMinute:)``).
    private var criticalDevices: [Int: Double] = [:]
    private var nextSweep: Double = 0

    package init(limits: RateLimits) {
        self.limits = limits
        self.bucket = GCRA(rate: limits.ratePerSecond, burst: limits.burst)
    }

    /// The rate and burst every device bucket shares; `devices` holds each one's state.
    private var deviceBucket: GCRA {
        GCRA(rate: Double(limits.perDevicePerMinute) / 60, burst: limits.perDevicePerMinute)
    }

    /// What a request learns about its limits, for the RateLimit-* headers.
    package struct Status: Sendable, Equatable {
        package var limit: Int
        package var remaining: Int
        /// Seconds until the bucket is full again.
        package var reset: Int

        package init(limit: Int, remaining: Int, reset: Int) {
            self.limit = limit
            self.remaining = remaining
            self.reset = reset
        }
    }

    package enum Decision: Sendable, Equatable {
        case admitted(Status)
        /// Refused whole: wait `retryAfter` seconds. `quotaExhausted` when the day's quota, not the rate, refused it.
        case refused(retryAfter: Int, quotaExhausted: Bool, Status)
    }

    /// Changes the limits, keeping today's count; the bucket starts full under the new rate.
    package mutating func update(_ limits: RateLimits) {
        guard limits != self.limits else { return }
        self.limits = limits
        bucket = GCRA(rate: limits.ratePerSecond, burst: limits.burst)
        devices.removeAll()
    }

    /// The UTC day of `now` (UNIX seconds), counted from 1970-01-01: the daily quota's period.
    package static func day(of now: Double) -> Int64 { Int64((now / 86_400).rounded(.down)) }

    /// Whether the quota's count of `now`'s day is here: seeded, or counted since the day's first admission.
    package func knowsQuota(at now: Double) -> Bool { day == Self.day(of: now) }

    /// Starts the count of `now`'s day at `used`, the notifications admitted on that day before this limiter counted
    /// any; does nothing when it already counts that day (a concurrent seed came first, and what was admitted since
    /// is counted on top of it).
    package mutating func seedQuota(used: Int, now: Double) {
        let today = Self.day(of: now)
        guard today != day else { return }
        day = today
        usedToday = max(0, used)
    }

    /// Admits `count` notifications at `now` (UNIX seconds) or refuses them all.
    package mutating func admit(_ count: Int, now: Double) -> Decision {
        let today = startDay(of: now)
        if usedToday + count > limits.dailyQuota {
            let untilMidnight = Double(today + 1) * 86_400 - now
            return .refused(retryAfter: Int(untilMidnight.rounded(.up)), quotaExhausted: true, status(now: now))
        }
        switch bucket.take(count, now: now) {
        case .allowed:
            usedToday += count
            return .admitted(status(now: now))
        case .denied(let retryAfter):
            let seconds =
                retryAfter.isFinite ? Int(retryAfter.rounded(.up)) : Int(Double(limits.burst) / limits.ratePerSecond)
            return .refused(retryAfter: max(1, seconds), quotaExhausted: false, status(now: now))
        }
    }

    /// Whether one more notification to `device` (a token fingerprint) fits its per-minute limit; takes it if so.
    package mutating func admitDevice(_ device: String, now: Double) -> Bool {
        sweep(now: now)
        let key = device.hashValue
        var arrival = devices[key] ?? 0
        guard case .allowed = deviceBucket.take(1, now: now, arrival: &arrival) else { return false }
        devices[key] = arrival
        return true
    }

    /// Counts `count` critical alerts admitted beyond the bucket in the day's quota: they are sent whatever is left of
    /// it, and may take it below zero for the day, so that later ordinary notifications wait for the next day.
    package mutating func countCritical(_ count: Int, now: Double) {
        startDay(of: now)
        usedToday += count
    }

    /// Counts from 0 when `now` is on a day after the one counted; returns `now`'s day.
    @discardableResult
    private mutating func startDay(of now: Double) -> Int64 {
        let today = Self.day(of: now)
        if today != day {
            day = today
            usedToday = 0
        }
        return today
    }

    /// Whether one more critical alert to `device` fits the relay's per-device limit of critical alerts
    /// (`perMinute`, `[limits] critical_per_device_per_minute`), which stands in for the tenant's per-device limit on
    /// them: a page gets through a device that ordinary pushes have used up, and a loop of pages is still braked.
    package mutating func admitCriticalDevice(_ device: String, now: Double, perMinute: Int) -> Bool {
        sweep(now: now)
        let key = device.hashValue
        var arrival = criticalDevices[key] ?? 0
        let bucket = GCRA(rate: Double(perMinute) / 60, burst: perMinute)
        guard case .allowed = bucket.take(1, now: now, arrival: &arrival) else { return false }
        criticalDevices[key] = arrival
        return true
    }

    /// Device buckets being tracked (full ones are dropped), for tests and metrics.
    package var trackedDevices: Int { devices.count }

    /// What is left of the bucket and of the day's quota at `now` (the quota's part may be below zero: critical alerts
    /// sent beyond it), without taking anything.
    package func left(now: Double) -> (bucket: Int, dailyQuota: Int) {
        let used = day == Self.day(of: now) ? usedToday : 0
        return (bucket.remaining(now: now), limits.dailyQuota - used)
    }

    /// What is left at `now` without taking anything: for the answer of a request that took nothing from the bucket
    /// (critical alerts only) and for `GET /v1/whoami`.
    package func status(now: Double) -> Status {
        let left = left(now: now)
        return Status(
            limit: limits.burst,
            remaining: min(left.bucket, max(0, left.dailyQuota)),
            reset: Int(bucket.secondsUntilFull(now: now).rounded(.up))
        )
    }

    /// Forgets full device buckets once a minute, so memory follows active devices only.
    private mutating func sweep(now: Double) {
        guard now >= nextSweep else { return }
        nextSweep = now + 60
        devices = devices.filter { !GCRA.isIdle(arrival: $0.value, now: now) }
        criticalDevices = criticalDevices.filter { !GCRA.isIdle(arrival: $0.value, now: now) }
    }
}

extension RateLimits {
    /// The limits as JSON, by their Swift names: in a tenant's audit snapshot and in `GET /v1/whoami`.
    package var json: JSONValue {
        .object([
            "ratePerSecond": .double(ratePerSecond),
            "burst": .int(Int64(burst)),
            "dailyQuota": .int(Int64(dailyQuota)),
            "perDevicePerMinute": .int(Int64(perDevicePerMinute)),
            "criticalReservePerHour": .int(Int64(criticalReservePerHour)),
        ])
    }
}
