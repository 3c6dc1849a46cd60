package import Foundation
package import Logging
import Metrics
package import RelayCore
package import RelayProviders
package import RelayStore
import Synchronization

/// How the relay treats requests.
package struct RelaySettings: Sendable {
    /// How long a push request waits for outcomes before answering "pending" for the rest.
    package var waitDeadline: Duration
    /// How long receipts are kept.
    package var receiptLifetime: TimeInterval
    /// Largest request body.
    package var maxBodyBytes: Int
    /// Whose `X-Forwarded-For` is believed for the client address the audit log records.
    package var trustedProxies: TrustedProxies
    /// The limits of a tenant created without its own (`[limits]`), for the admin API.
    package var tenantDefaults: RateLimits
    /// Critical alerts per device token per minute admitted within a tenant's critical reserve
    /// (`[limits] critical_per_device_per_minute`).
    package var criticalPerDevicePerMinute: Int
    /// The relay's apps, `default` and each `[apps.<name>]`, with credentials or not: the names a message and a
    /// tenant may use.
    package var apps: Set<String>
    /// How long `/readyz` waits for the store's probe before answering 503 (`[server] readiness_timeout_ms`).
    package var readinessTimeout: Duration
    /// How long a request waits for writes its answer depends on (`[store] request_timeout_ms`): writes that no
    /// commit has taken by then are withdrawn and the request is answered 503.
    package var storeRequestTimeout: Duration

    package init(
        waitDeadline: Duration = .seconds(10),
        receiptLifetime: TimeInterval = 72 * 3600,
        maxBodyBytes: Int = 1 << 20,
        trustedProxies: TrustedProxies = TrustedProxies([]),
        tenantDefaults: RateLimits = RateLimits(),
        criticalPerDevicePerMinute: Int = 10,
        apps: Set<String> = [AppName.default],
        readinessTimeout: Duration = .seconds(1),
        storeRequestTimeout: Duration = .seconds(5)
    ) {
        self.readinessTimeout = readinessTimeout
        self.storeRequestTimeout = storeRequestTimeout
        self.tenantDefaults = tenantDefaults
        self.criticalPerDevicePerMinute = criticalPerDevicePerMinute
        self.apps = apps
        self.waitDeadline = waitDeadline
        self.receiptLifetime = receiptLifetime
        self.maxBodyBytes = maxBodyBytes
        self.trustedProxies = trustedProxies
    }
}

/// The relay's core: admits a tenant's notifications, applies policy and limits, hands them to the senders, and
/// turns outcomes into tickets and receipts.
///
/// ### Overview
/// For one request: the tenant's bucket and daily quota admit all its notifications or none (429), but for the
/// critical alerts of a tenant allowed them, which go beyond both within the tenant's critical reserve (a request
/// with some is never refused whole: its others are refused one by one when they do not fit); each notification
/// gets a receipt id; policy (critical alerts, allowed providers), provider availability and the per-device limit
/// refuse single notifications; the rest go to ``DeliveryQueue`` as one job, which sends them and then commits every
/// receipt of the request with its outcome, the audit records and the usage in one group commit (``CommitQueue``).
/// The request waits until the job has committed or its deadline passes; at the deadline it stores the receipts as
/// they stand ("pending" where no outcome is known; never overwriting an outcome) and answers with what is known.
///
/// One commit per request, after the outcomes, keeps the store off the path to the provider. While the store fails
/// (the last commit failed), the relay writes the receipts ahead of sending instead, so a store that is down
/// refuses pushes (503 STORE_UNAVAILABLE) rather than letting them go out unrecorded; the first commit that succeeds
/// ends that.
///
/// ### The delivery journal
/// A notification whose ticket is answered before it is final gets a journal entry (``JournalSettings``) in the
/// commit that stores its pending receipt, before the answer leaves: at the wait deadline, with the receipts as they
/// stand; or, for a request that asks to be answered at once (``Acceptance/asynchronous``), ahead of sending, with
/// its pending receipts. A request answered before its deadline writes none: its one commit holds its outcomes. The
/// entries let a relay that starts after a crash resume those notifications (``resumeJournal(includingOwn:)``).
package final class Relay: Sendable {
    package let store: any PushStore
    package let settings: RelaySettings
    package let authenticator: Authenticator
    /// Failed authentications by client address: too many, and the address's requests without a valid key get 429
    /// (a valid key is served whatever its address did).
    package let authenticationFailures = AuthenticationFailures()
    /// Refusals without a valid key, tallied by address and minute for the audit log.
    package let anonymousRefusals = AnonymousRefusals()
    package let queue: DeliveryQueue
    /// Group commit of receipts, usage and audit records; a service that runs with the application.
    package let commits: CommitQueue
    /// Every app's senders.
    package let apps: AppSenders
    /// The providers each app has credentials for, for admission.
    private let appProviders: [String: Set<Provider>]
    let limiters: RateLimiterRegistry
    /// How long a request waits for a call to the store (`[store] request_timeout_ms`).
    let storeCalls: StoreCallDeadline
    private let fingerprinter = Mutex<TokenFingerprinter?>(nil)
    package let logger: Logger
    /// The one clock of the relay and its parts (see ``RelayClock``).
    package let clock: RelayClock
    /// How notifications not final when answered are journaled and resumed.
    package let journal: JournalSettings

    /// - Parameters:
    ///   - queue: The delivery queue; by default one on `clock`.
    ///   - commits: The commit queue; by default one on `clock` with the default audit settings. One passed in
    ///     should run on `clock` too.
    ///   - clock: The time of everything the relay does: its queues, authenticator, delivery jobs and maintenance.
    ///   - journal: The delivery journal's key, instance and leases; by default a random key, which a relay over a
    ///     store that outlives it must not use.
    ///   - senders: The default app's senders.
    ///   - apps: The other apps' senders, by app.
    package init(
        store: any PushStore,
        senders: [Provider: any PushSender],
        apps: [String: [Provider: any PushSender]] = [:],
        settings: RelaySettings = .init(),
        queue: DeliveryQueue? = nil,
        commits: CommitQueue? = nil,
        rateLimitLeases: (any RateLimitLeaseStore)? = nil,
        logger: Logger = Logger(label: "pushrelay"),
        clock: RelayClock = .system,
        journal: JournalSettings = JournalSettings()
    ) {
        self.store = store
        self.journal = journal
        // With a lease store (PostgreSQL), tenants' limits hold across every relay on the database; without one, the
        // daily quota starts each tenant's day from the store's usage, so that it holds across a restart.
        let queue = queue ?? DeliveryQueue(clock: clock)
        self.queue = queue
        self.storeCalls = StoreCallDeadline(timeout: settings.storeRequestTimeout, timer: queue.deadlines, clock: clock)
        self.limiters = RateLimiterRegistry(
            leases: rateLimitLeases, usage: store, clock: clock, deadline: storeCalls)
        self.apps = AppSenders(senders, apps: apps)
        self.appProviders = self.apps.providers
        self.settings = settings
        self.commits = commits ?? CommitQueue(store: store, clock: clock)
        self.logger = logger
        self.clock = clock
        self.authenticator = Authenticator(store: store, clock: clock, deadline: storeCalls)
    }

    /// Writes the audit records of the refusals without a valid key tallied in minutes that have ended (every minute
    /// when `all`, on shutdown); see ``AnonymousRefusals``.
    package func flushAnonymousRefusals(all: Bool = false) async {
        let entries = anonymousRefusals.drain(before: all ? nil : AuditTime.millis(clock.date))
        guard !entries.isEmpty else { return }
        do {
            try await commits.submit(StoreBatch(), audit: entries, ifFailed: .hold)
        } catch {
            logger.error("Audit records of refused requests not stored", metadata: ["error": "\(error)"])
        }
    }

    /// The default app's senders.
    package var senders: [Provider: any PushSender] { apps.byApp[AppName.default] ?? [:] }

    /// The providers with credentials, for any app.
    package var configuredProviders: Set<Provider> { appProviders.values.reduce(into: []) { $0.formUnion($1) } }

    /// When a push request is answered.
    package enum Acceptance: Sendable, Equatable {
        /// Once every outcome is known or the wait deadline (`[receipts] wait_ms`) has passed, whichever comes first.
        case waitForOutcomes
        /// As soon as the notifications are journaled, before they are sent (HTTP `Prefer: respond-async`); their
        /// outcomes arrive on the receipts.
        case asynchronous
    }

    /// The outcome of a push request.
    package struct PushResult: Sendable {
        package var tickets: [Ticket]
        package var rateLimit: TenantRateLimiter.Status
        /// The request was answered asynchronously: its notifications were journaled and are being sent (each is
        /// `pending`, but for the relay's own refusals).
        package var asynchronous = false
    }

    /// Delivers a request's notifications for a tenant: the burst and the tenant's bucket first (all or nothing), then
    /// ``AdmissionPlan`` decides each notification, and this executes the plan: write, submit, wait.
    ///
    /// - Parameter acceptance: When to answer: once the outcomes are known (up to the wait deadline), or as soon as the
    ///   notifications are journaled.
    /// - Throws: ``RequestRefusal`` when the request is refused whole (nothing is sent): too many notifications for
    ///   the burst, the tenant's rate or quota, a full queue, shutdown, or a store that does not answer; and
    ///   ``RequestRefusal/unrecorded`` when every notification went out and none could be recorded.
    package func push(
        _ pushes: [ResolvedPush],
        identity: TenantIdentity,
        origin: RequestOrigin = RequestOrigin(),
        acceptance: Acceptance = .waitForOutcomes,
        logger requestLogger: Logger
    ) async throws(RequestRefusal) -> PushResult {
        guard queue.isAccepting else { throw .shuttingDown }
        // Writes of failed commits fill the memory that holds them: nothing new until the store takes them.
        guard !commits.isOverUnsavedLimit else { throw .storeUnavailable }
        // Checked before the tenant's rate is spent on a request the queue could not take.
        guard queue.hasRoom(for: pushes.count) else {
            throw .queueFull(retryAfter: DeliveryQueue.retryAfterWhenFull)
        }
        let date = clock.date
        let tenant = identity.tenant
        let request = origin
        let headroom = CriticalHeadroom(pushes, tenant: tenant)
        try AdmissionPlan.checkSize(pushes.count - headroom.criticals.count, limits: tenant.limits)
        let (status, rateRefusal) = try await admitRate(pushes, headroom: headroom, at: date, logger: requestLogger)
        let fingerprints = try await fingerprinter()
        // The request's receipt ids at once: one call to the random source for all of them.
        var receiptIDs = UUID.timeOrdered(count: pushes.count, at: date).makeIterator()
        let plan = AdmissionPlan(
            pushes,
            origin: AdmissionPlan.Origin(
                tenant: tenant, keyID: identity.keyID, requestID: request.requestID, client: request.client),
            configuredProviders: appProviders,
            now: date,
            receiptLifetime: settings.receiptLifetime,
            receiptID: { (receiptIDs.next() ?? UUID.timeOrdered(at: date)).lowercaseString },
            fingerprint: { fingerprints.fingerprint($0.token, provider: $0.provider.rawValue) },
            allowDevice: { limiters.admitDevice(tenantID: tenant.id, fingerprint: $0, now: date) },
            rateRefusal: rateRefusal,
            allowCriticalDevice: { [limiters, settings] in
                limiters.admitCriticalDevice(
                    tenantID: tenant.id, limits: tenant.limits, fingerprint: $0, now: date,
                    perMinute: settings.criticalPerDevicePerMinute)
            }
        )
        for refused in plan.refused { refused.record.count(.final(.refused(refused.refusal, retryAfter: nil))) }
        let (tickets, asynchronous) = try await execute(plan, at: date, acceptance: acceptance, logger: requestLogger)
        return PushResult(tickets: tickets, rateLimit: status, asynchronous: asynchronous)
    }

    /// Takes the request's notifications from the tenant's bucket and daily quota, all or none; a refusal is counted
    /// in the tenant's usage. A request with critical alerts the tenant may send is never refused whole: when the
    /// bucket has no room for all of it, its other notifications are tried alone and refused one by one if they do
    /// not fit either, and its critical alerts go beyond the bucket, within the tenant's critical reserve
    /// (``takeCriticalReserve(_:tenant:at:logger:)``).
    ///
    /// - Returns: The bucket's status for the answer's headers, and the refusal of each notification the limits
    ///   refused one by one (for ``AdmissionPlan``).
    private func admitRate(
        _ pushes: [ResolvedPush],
        headroom: CriticalHeadroom,
        at date: Date,
        logger requestLogger: Logger
    ) async throws(RequestRefusal) -> (TenantRateLimiter.Status, (Int) -> (RelayRefusal, Duration?)?) {
        let tenant = headroom.tenant
        let admitNone: (Int) -> (RelayRefusal, Duration?)? = { _ in nil }
        guard !headroom.criticals.isEmpty else {
            return (try await admitWhole(pushes, tenant: tenant, at: date, logger: requestLogger), admitNone)
        }
        let whole = try await takeFromBucket(pushes.count, tenant: tenant, at: date, logger: requestLogger)
        if case .admitted(let status) = whole { return (status, admitNone) }
        // The bucket has no room for the whole request: its critical alerts go beyond it.
        let criticals = Set(headroom.criticals)
        let ordinary = pushes.count - criticals.count
        var status =
            limiters.status(tenantID: tenant.id, now: date)
            ?? TenantRateLimiter.Status(limit: tenant.limits.burst, remaining: 0, reset: 0)
        var ordinaryRetryAfter: Duration?
        if ordinary > 0 {
            switch try await takeFromBucket(ordinary, tenant: tenant, at: date, logger: requestLogger) {
            case .admitted(let admitted):
                status = admitted
            case .refused(let retryAfter, let quota, let refused):
                Counter(label: "relay_rate_limited_total", dimensions: [("reason", quota ? "daily_quota" : "rate")])
                    .increment()
                status = refused
                ordinaryRetryAfter = .seconds(retryAfter)
            }
        }
        let granted = await takeCriticalReserve(criticals.count, tenant: tenant, at: date, logger: requestLogger)
        let exhausted = Set(headroom.criticals.dropFirst(granted))
        let untilNextHour = Duration.seconds(max(1, 3600 - Int(date.timeIntervalSince1970) % 3600))
        return (
            status,
            { index in
                if exhausted.contains(index) { return (.criticalReserveExhausted, untilNextHour) }
                if let ordinaryRetryAfter, !criticals.contains(index) {
                    return (.tenantRateLimited, ordinaryRetryAfter)
                }
                return nil
            }
        )
    }

    /// Asks the tenant's bucket and quota for `count` notifications.
    private func takeFromBucket(
        _ count: Int,
        tenant: Tenant,
        at date: Date,
        logger requestLogger: Logger
    ) async throws(RequestRefusal) -> TenantRateLimiter.Decision {
        do {
            return try await limiters.admitShared(tenantID: tenant.id, limits: tenant.limits, count: count, now: date)
        } catch {
            requestLogger.error("The shared rate limit could not be leased", metadata: ["error": "\(error)"])
            throw .storeUnavailable
        }
    }

    /// Takes up to `count` critical alerts from the tenant's critical reserve of this UTC hour, kept in the store (so
    /// that it holds across a restart and, on PostgreSQL, across relays), and counts those taken in the day's quota.
    /// A store that does not answer takes nothing from the reserve and refuses no critical alert: the relay must not
    /// be the reason a page is not sent (the commit that follows tells whether the store is really down).
    ///
    /// - Returns: How many were taken: the first that many critical alerts beyond the bucket go out.
    private func takeCriticalReserve(
        _ count: Int,
        tenant: Tenant,
        at date: Date,
        logger requestLogger: Logger
    ) async -> Int {
        let hour = Int64(date.timeIntervalSince1970) / 3600
        var granted = count
        do {
            granted = try await storeCalls.run { [store] in
                try await store.takeCriticalReserve(
                    tenantID: tenant.id, hour: hour, count: count, limit: tenant.limits.criticalReservePerHour)
            }
        } catch {
            requestLogger.error(
                "The critical reserve could not be read; the critical alerts go out", metadata: ["error": "\(error)"])
        }
        do {
            try await limiters.countCritical(tenantID: tenant.id, limits: tenant.limits, count: granted, now: date)
        } catch {
            // The pages go out; only the shared day's count misses them (usage still has them).
            requestLogger.error(
                "Critical alerts sent beyond the limits could not be counted in the shared quota",
                metadata: ["error": "\(error)"])
        }
        Counter(label: "relay_critical_beyond_limits_total", dimensions: [("tenant", tenant.id)])
            .increment(by: granted)
        if granted < count {
            Counter(label: "relay_critical_reserve_exhausted_total", dimensions: [("tenant", tenant.id)])
                .increment(by: count - granted)
            requestLogger.warning(
                "Critical alerts refused: the tenant's critical reserve for this hour is spent",
                metadata: [
                    "tenant": "\(tenant.name)", "refused": "\(count - granted)",
                    "reservePerHour": "\(tenant.limits.criticalReservePerHour)",
                ])
        }
        return granted
    }

    /// Takes a request without critical alerts from the tenant's bucket and daily quota, all or none.
    private func admitWhole(
        _ pushes: [ResolvedPush],
        tenant: Tenant,
        at date: Date,
        logger requestLogger: Logger
    ) async throws(RequestRefusal) -> TenantRateLimiter.Status {
        let decision = try await takeFromBucket(pushes.count, tenant: tenant, at: date, logger: requestLogger)
        switch decision {
        case .admitted(let admitted):
            return admitted
        case .refused(let retryAfter, let quota, let refused):
            Counter(label: "relay_rate_limited_total", dimensions: [("reason", quota ? "daily_quota" : "rate")])
                .increment()
            var usage = StoreBatch()
            for push in pushes {
                usage.count(
                    UsageCounts(rateLimited: 1, notAdmitted: 1, critical: push.isCritical ? 1 : 0),
                    for: UsageKey(
                        tenantID: tenant.id, date: date, provider: push.provider,
                        app: push.message.app ?? tenant.defaultApp)
                )
            }
            // Counted, not awaited for long (held if the store fails): the refusal's audit record is written by the
            // responder.
            try? await commits.submit(usage, ifFailed: .hold)
            throw .rateLimited(retryAfter: retryAfter, dailyQuota: quota, status: refused)
        }
    }

    /// Executes a plan: the refusals alone are stored at once; otherwise the deliveries go to the queue as one job,
    /// and the request waits for its outcomes until the deadline, or is answered once they are journaled. Returns the
    /// tickets as known then, and whether the answer is asynchronous.
    private func execute(
        _ plan: AdmissionPlan,
        at date: Date,
        acceptance: Acceptance,
        logger requestLogger: Logger
    ) async throws(RequestRefusal) -> (tickets: [Ticket], asynchronous: Bool) {
        var tickets = plan.tickets
        guard !plan.deliveries.isEmpty else {
            // Nothing goes upstream: the refusals are the whole answer, stored before it is given.
            try await store(plan.writes, logger: requestLogger)
            return (tickets, false)
        }
        let job = DeliveryJob(
            items: plan.deliveries.map {
                DeliveryJob.Item(
                    index: $0.index, push: $0.push, record: $0.record,
                    deadline: Resumption.deadline(of: $0.push, admittedAt: date, window: journal.resumeWindow))
            },
            decided: plan.writes,
            senders: apps,
            commits: commits,
            journal: journal,
            clock: clock,
            logger: requestLogger
        )
        let reservation = try queue.reserve(job.items.count)
        let asynchronous = acceptance == .asynchronous
        // Asynchronously, the receipts and journal entries are stored before anything is sent: the answer promises
        // outcomes on the receipts. While the store fails, receipts and journal entries are written ahead of sending
        // too, so that nothing goes out unrecorded and nothing is lost if the outcomes cannot be stored: a store that
        // is still down refuses the request (503) before anything is sent.
        let writtenAhead = asynchronous || commits.isFailing
        if writtenAhead {
            do {
                let ahead = try job.provisionalWrites(at: date)
                try await store(RecordWrites(batch: ahead), logger: requestLogger)
            } catch {
                queue.release(reservation)
                throw .storeUnavailable
            }
        }
        do {
            try queue.submit(job, using: reservation)
        } catch {
            if writtenAhead {
                // Shutdown began after the receipts were stored: they must not stay pending (or journaled) for ever.
                var refusal = plan.writes
                for item in job.items {
                    item.record.record(.final(.refused(.shuttingDown, retryAfter: nil)), at: date, into: &refusal)
                    refusal.batch.journalDeletes.append(item.record.receipt.id)
                }
                try? await commits.submit(refusal.batch, audit: refusal.audit, ifFailed: .hold)
            }
            throw error
        }
        if asynchronous { return (tickets, true) }
        var progress = await job.progress(until: clock.now + settings.waitDeadline, timer: queue.deadlines)
        var unrecorded = false
        if !progress.finished {
            // Answered before the job wrote its receipts: the ids in this answer must be found meanwhile, and what is
            // not final must survive a crash (the delivery journal). No `pending` without its journal entry: when
            // they cannot be stored, the request waits a while longer for outcomes, and what is still unknown then
            // is answered as unrecorded (503 when nothing else is known).
            do {
                try await commits.submit(
                    try job.provisionalWrites(),
                    withdrawal: (clock.now + settings.storeRequestTimeout, queue.deadlines))
            } catch {
                requestLogger.error(
                    "Pending receipts and journal entries could not be stored; waiting for outcomes",
                    metadata: ["error": "\(error)"])
                progress = await job.progress(until: clock.now + settings.storeRequestTimeout, timer: queue.deadlines)
                unrecorded = !progress.finished
            }
        }
        for item in job.items {
            if let report = progress.reports[item.index] {
                tickets[item.index].state = Ticket.State(Conclusion(report))
            } else if unrecorded {
                tickets[item.index].state = .unrecorded
            }
        }
        if unrecorded && tickets.allSatisfy({ $0.state == .unrecorded }) { throw .unrecorded }
        return (tickets, false)
    }

    /// The caller's own receipts among `ids`; anyone else's are absent.
    ///
    /// - Throws: ``RequestRefusal/receiptLookupsExhausted(retryAfter:)`` when the tenant's receipt lookups (their
    ///   own budget, apart from its sends) are used up, ``RequestRefusal/storeUnavailable`` when the store does not
    ///   answer.
    package func receipts(ids: [String], identity: TenantIdentity) async throws(RequestRefusal) -> [Receipt] {
        try admitLookup(tenantID: identity.tenant.id)
        do {
            return try await storeCalls.run { [store] in
                try await store.receipts(ids: ids, tenantID: identity.tenant.id)
            }
        } catch {
            throw .storeUnavailable
        }
    }

    /// Commits `writes` before an answer depends on them, waiting at most `[store] request_timeout_ms` for a commit
    /// to take them.
    ///
    /// - Throws: ``RequestRefusal/storeUnavailable`` when the commit fails or the writes were withdrawn.
    private func store(_ writes: RecordWrites, logger: Logger) async throws(RequestRefusal) {
        do {
            try await commits.submit(
                writes.batch, audit: writes.audit,
                withdrawal: (clock.now + settings.storeRequestTimeout, queue.deadlines))
        } catch {
            logger.error("Receipts could not be stored", metadata: ["error": "\(error)"])
            throw .storeUnavailable
        }
    }

    private func fingerprinter() async throws(RequestRefusal) -> TokenFingerprinter {
        if let ready = fingerprinter.withLock({ $0 }) { return ready }
        do {
            let made = TokenFingerprinter(key: try await storeCalls.run { [store] in try await store.fingerprintKey() })
            fingerprinter.withLock { $0 = made }
            return made
        } catch {
            throw .storeUnavailable
        }
    }
}
