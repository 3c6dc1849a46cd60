package import Foundation
package import HTTPTypes
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

    package init(
        waitDeadline: Duration = .seconds(10),
        receiptLifetime: TimeInterval = 72 * 3600,
        maxBodyBytes: Int = 1 << 20,
        trustedProxies: TrustedProxies = TrustedProxies([]),
        tenantDefaults: RateLimits = RateLimits()
    ) {
        self.tenantDefaults = tenantDefaults
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
/// For one request: the tenant's bucket and daily quota admit all its notifications or none (429); each notification
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
package final class Relay: Sendable {
    package let store: any PushStore
    package let settings: RelaySettings
    package let authenticator: Authenticator
    package let queue: DeliveryQueue
    /// Group commit of receipts, usage and audit records; a service that runs with the application.
    package let commits: CommitQueue
    let senders: [Provider: any PushSender]
    private let limiters: RateLimiterRegistry
    private let fingerprinter = Mutex<TokenFingerprinter?>(nil)
    let logger: Logger
    private let now: @Sendable () -> Date

    package init(
        store: any PushStore,
        senders: [Provider: any PushSender],
        settings: RelaySettings = .init(),
        queue: DeliveryQueue = DeliveryQueue(),
        commits: CommitQueue? = nil,
        rateLimitLeases: (any RateLimitLeaseStore)? = nil,
        logger: Logger = Logger(label: "pushrelay"),
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.store = store
        // With a lease store (PostgreSQL), tenants' limits hold across every relay on the database.
        self.limiters = RateLimiterRegistry(leases: rateLimitLeases)
        self.senders = senders
        self.settings = settings
        self.queue = queue
        self.commits = commits ?? CommitQueue(store: store, now: now)
        self.logger = logger
        self.now = now
        self.authenticator = Authenticator(store: store, now: now)
    }

    /// The providers with credentials.
    package var configuredProviders: Set<Provider> { Set(senders.keys) }

    /// The outcome of a push request.
    package struct PushResult: Sendable {
        package var tickets: [Ticket]
        package var rateLimit: TenantRateLimiter.Status
    }

    /// Delivers a request's notifications for a tenant.
    ///
    /// - Throws: ``RelayHTTPError`` 429 when the request does not fit the tenant's limits (nothing is sent), 503 when
    ///   the relay is shutting down or the store is unavailable.
    package func push(
        _ pushes: [ResolvedPush],
        identity: TenantIdentity,
        trail: RequestTrail? = nil,
        logger requestLogger: Logger
    ) async throws(RelayHTTPError) -> PushResult {
        guard queue.isAccepting else { throw .shuttingDown }
        let date = now()
        let tenant = identity.tenant
        let origin = trail?.current ?? RequestTrail.Fields()
        guard pushes.count <= tenant.limits.burst else {
            // More than the whole burst can never fit, however long the caller waits.
            throw RelayHTTPError(
                validation: ValidationFailure(issues: [
                    ValidationIssue(
                        path: "",
                        message: "the request carries \(pushes.count) notifications, more than this tenant's burst of \(tenant.limits.burst); split it"
                    )
                ])
            )
        }
        let status: TenantRateLimiter.Status
        let decision: TenantRateLimiter.Decision
        do {
            decision = try await limiters.admitShared(
                tenantID: tenant.id,
                limits: tenant.limits,
                count: pushes.count,
                now: date
            )
        } catch {
            requestLogger.error("The shared rate limit could not be leased", metadata: ["error": "\(error)"])
            throw .storeUnavailable
        }
        switch decision {
        case .admitted(let admitted):
            status = admitted
        case .refused(let retryAfter, let quota, let refused):
            Counter(label: "relay_rate_limited_total", dimensions: [("reason", quota ? "daily_quota" : "rate")]).increment()
            var usage = StoreBatch()
            for push in pushes {
                usage.count(UsageCounts(rateLimited: 1), for: UsageKey(tenantID: tenant.id, date: date, provider: push.provider))
            }
            // Counted, not awaited for long: the refusal's audit record is written by the responder.
            try? await commits.submit(usage)
            throw RelayHTTPError.tooManyRequests(retryAfter: retryAfter, quota: quota, status: refused)
        }
        let fingerprints = try await fingerprinter()

        var tickets: [Ticket] = []
        var batch = StoreBatch()
        var audit: [AuditEntry] = []
        var items: [DeliveryJob.Item] = []
        let expires = date.addingTimeInterval(settings.receiptLifetime)
        for (index, var push) in pushes.enumerated() {
            let receiptID = UUID.timeOrdered(at: date).lowercaseString
            let fingerprint = fingerprints.fingerprint(push.token, provider: push.provider.rawValue)
            push.criticalChannel = tenant.criticalChannel
            var refusal: RelayRefusal?
            if push.isCritical && !tenant.allowCriticalAlerts {
                refusal = .criticalAlertsNotAllowed
            } else if !tenant.allows(push.provider) {
                refusal = .providerNotAllowed
            } else if senders[push.provider] == nil {
                refusal = .providerNotConfigured
            } else if !limiters.admitDevice(tenantID: tenant.id, fingerprint: fingerprint, now: date) {
                refusal = .messageRateExceeded
            }
            var receipt = Receipt(
                id: receiptID,
                tenantID: tenant.id,
                keyID: identity.keyID,
                provider: push.provider,
                tokenFingerprint: fingerprint,
                isCritical: push.isCritical,
                status: .pending,
                createdAt: date,
                updatedAt: date,
                expiresAt: expires
            )
            if let refusal {
                receipt.status = .error
                receipt.errorCode = refusal.code
                receipt.message = refusal.message
                let retryAfter = refusal == .messageRateExceeded ? max(1, 60 / max(1, tenant.limits.perDevicePerMinute)) : nil
                tickets.append(
                    Ticket(
                        id: receiptID,
                        provider: push.provider,
                        state: .error(code: refusal.code, message: refusal.message, removeToken: false, retryAfter: retryAfter)
                    )
                )
                Counter(
                    label: "relay_pushes_total",
                    dimensions: [("tenant", tenant.name), ("provider", push.provider.rawValue), ("outcome", "refused")]
                ).increment()
                batch.count(
                    UsageCounts(outcomeCode: refusal.code),
                    for: UsageKey(tenantID: tenant.id, date: date, provider: push.provider)
                )
                audit.append(
                    AuditEntry(
                        timeMillis: AuditTime.millis(date), event: .push, tenantID: tenant.id, keyID: identity.keyID,
                        requestID: origin.requestID, client: origin.client, provider: push.provider.rawValue,
                        tokenFingerprint: fingerprint, critical: push.isCritical, outcome: refusal.code,
                        attempts: 0, latencyMillis: 0
                    )
                )
                batch.receipts.append(receipt)
            } else {
                tickets.append(Ticket(id: receiptID, provider: push.provider, state: .pending))
                items.append(DeliveryJob.Item(index: index, push: push, receipt: receipt))
            }
        }

        guard !items.isEmpty else {
            // Nothing goes upstream: the refusals are the whole answer, stored before it is given.
            try await store(batch, audit: audit, logger: requestLogger)
            return PushResult(tickets: tickets, rateLimit: status)
        }
        let job = DeliveryJob(
            items: items,
            decided: DeliveryJob.Writes(batch: batch, audit: audit),
            origin: DeliveryJob.Origin(tenant: tenant, keyID: identity.keyID, request: origin),
            senders: senders,
            commits: commits,
            logger: requestLogger
        )
        // While the store fails, receipts are written ahead of sending, so that nothing goes out unrecorded: a store
        // that is still down refuses the request (503) before anything is sent.
        let writtenAhead = commits.isFailing
        if writtenAhead {
            try await store(StoreBatch(provisionalReceipts: job.provisionalReceipts(at: date)), logger: requestLogger)
        }
        do {
            try queue.submit(job)
        } catch {
            if writtenAhead {
                // Shutdown began after the receipts were stored: they must not stay pending for ever.
                let refusal = items.map {
                    ReceiptUpdate(
                        id: $0.receipt.id,
                        status: .error,
                        errorCode: "ProviderUnavailable",
                        message: "The relay was shutting down; nothing was sent. Try again.",
                        updatedAt: date
                    )
                }
                try? await commits.submit(StoreBatch(receiptUpdates: refusal))
            }
            throw error
        }
        let progress = await job.progress(until: .now + settings.waitDeadline, timer: queue.deadlines)
        if !progress.finished {
            // Answered before the job wrote its receipts: the ids in this answer must be found meanwhile.
            do {
                try await commits.submit(StoreBatch(provisionalReceipts: job.provisionalReceipts()))
            } catch {
                requestLogger.error("Pending receipts could not be stored", metadata: ["error": "\(error)"])
            }
        }
        for item in items {
            guard let report = progress.reports[item.index] else { continue }
            tickets[item.index].state =
                if report.receiptPending, case .delivered(let ticketID) = report.outcome {
                    .ok(providerMessageID: ticketID)
                } else {
                    Ticket.State(report.outcome)
                }
        }
        return PushResult(tickets: tickets, rateLimit: status)
    }

    /// The caller's own receipts among `ids`; anyone else's are absent.
    ///
    /// - Throws: ``RelayHTTPError`` 429 when the tenant's receipt lookups (their own budget, apart from its sends)
    ///   are used up, 503 when the store does not answer.
    package func receipts(ids: [String], identity: TenantIdentity) async throws(RelayHTTPError) -> [Receipt] {
        if case .denied(let wait) = limiters.admitReceiptLookup(tenantID: identity.tenant.id, now: now()) {
            let retryAfter = max(1, Int(wait.rounded(.up)))
            Counter(label: "relay_rate_limited_total", dimensions: [("reason", "receipt_lookups")]).increment()
            throw RelayHTTPError(
                .tooManyRequests,
                code: "TOO_MANY_REQUESTS",
                message: "Too many receipt lookups; retry after \(retryAfter) s. Lookups have their own budget and never use up pushes.",
                headers: [.retryAfter: String(retryAfter)]
            )
        }
        do {
            return try await store.receipts(ids: ids, tenantID: identity.tenant.id)
        } catch {
            throw .storeUnavailable
        }
    }

    /// Commits `batch` and `audit` before an answer depends on them.
    ///
    /// - Throws: ``RelayHTTPError`` 503 STORE_UNAVAILABLE when the commit fails.
    private func store(_ batch: StoreBatch, audit: [AuditEntry] = [], logger: Logger) async throws(RelayHTTPError) {
        do {
            try await commits.submit(batch, audit: audit)
        } catch {
            logger.error("Receipts could not be stored", metadata: ["error": "\(error)"])
            throw .storeUnavailable
        }
    }

    private func fingerprinter() async throws(RelayHTTPError) -> TokenFingerprinter {
        if let ready = fingerprinter.withLock({ $0 }) { return ready }
        do {
            let made = TokenFingerprinter(key: try await store.fingerprintKey())
            fingerprinter.withLock { $0 = made }
            return made
        } catch {
            throw .storeUnavailable
        }
    }
}

extension RelayHTTPError {
    /// 429 with Retry-After and the RateLimit headers.
    static func tooManyRequests(retryAfter: Int, quota: Bool, status: TenantRateLimiter.Status) -> RelayHTTPError {
        var headers = status.headers
        headers[.retryAfter] = String(retryAfter)
        return RelayHTTPError(
            .tooManyRequests,
            code: "TOO_MANY_REQUESTS",
            message: quota
                ? "The tenant's daily quota is used up; nothing was sent. It renews at midnight UTC."
                : "The request exceeds the tenant's rate limit; nothing was sent. Retry after \(retryAfter) s.",
            headers: headers
        )
    }
}

extension TenantRateLimiter.Status {
    /// `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`.
    package var headers: HTTPFields {
        var fields = HTTPFields()
        fields[.rateLimitLimit] = String(limit)
        fields[.rateLimitRemaining] = String(remaining)
        fields[.rateLimitReset] = String(reset)
        return fields
    }
}

extension HTTPField.Name {
    // The literals are valid field-name tokens (RFC 9110 §5.1), so `init?` cannot fail: the unwraps are safe.
    static let rateLimitLimit = HTTPField.Name("RateLimit-Limit")!
    static let rateLimitRemaining = HTTPField.Name("RateLimit-Remaining")!
    static let rateLimitReset = HTTPField.Name("RateLimit-Reset")!
    static let requestID = HTTPField.Name("X-Request-ID")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
