package import Foundation
package import RelayCore
package import RelayStore

/// Why a whole request is refused: nothing of it is sent. A domain error, without HTTP: each API renders it its own
/// way (the native and Expo APIs as the relay's JSON errors, OneUptime with its own bodies).
package enum RequestRefusal: Error, Equatable, Sendable {
    /// More notifications than the tenant's whole burst: they can never fit, however long the caller waits.
    case exceedsBurst(count: Int, burst: Int)
    /// The tenant's rate or daily quota has no room for the request now; `status` is the bucket after the refusal.
    case rateLimited(retryAfter: Int, dailyQuota: Bool, status: TenantRateLimiter.Status)
    /// The tenant's receipt lookups, a budget apart from its sends, are used up for now.
    case receiptLookupsExhausted(retryAfter: Int)
    /// The relay is draining for shutdown and takes nothing new.
    case shuttingDown
    /// The relay holds as many notifications not concluded yet as it may (`[server] max_pending_notifications`):
    /// it takes nothing new rather than accept what it could not keep; the caller may try again after `retryAfter`
    /// seconds.
    case queueFull(retryAfter: Int)
    /// The store does not answer, so nothing may go out unrecorded.
    case storeUnavailable
    /// The notifications were handed to the provider, but neither their outcomes nor their journal entries could be
    /// stored before the answer (the store failed while they were in flight): none is answered `pending`, which
    /// promises a stored journal entry. They may still be delivered.
    case unrecorded
}

/// What admitting one request decides once the tenant's bucket has admitted it, before anything is sent.
///
/// Pure: the tenant, the resolved pushes, what the relay can send, the device allowance and the time come in;
/// tickets, the notifications to send and the relay's own refusals (with their receipts, usage and audit records)
/// come out. ``Relay`` executes it: write, submit, wait.
///
/// Each notification gets a receipt id and its app (the message's, or the tenant's default app); a notification is
/// refused, in this order, when it is a critical alert the tenant may not send, names an app the tenant may not use,
/// goes to a provider the tenant may not use, to a provider its app has no credentials for, or to a device over its
/// per-minute allowance. The device allowance is asked only for notifications that passed
/// the other checks, so a refused notification never uses it up.
package struct AdmissionPlan: Sendable {
    /// One notification that goes upstream.
    package struct Delivery: Sendable {
        /// Its place in the request, which is its ticket's place in the answer.
        package var index: Int
        package var push: ResolvedPush
        /// Its record, with the receipt pending, which the delivery job concludes with the sender's report.
        package var record: NotificationRecord
    }

    /// One notification the relay refuses itself; nothing of it is sent.
    package struct Refused: Sendable, Equatable {
        package var index: Int
        package var refusal: RelayRefusal
        /// Its record, which the plan concluded with the refusal (in ``writes``).
        package var record: NotificationRecord
    }

    /// Who sends, for receipts and audit records.
    package struct Origin: Sendable, Equatable {
        package var tenant: Tenant
        package var keyID: String
        package var requestID: String?
        package var client: String?

        package init(tenant: Tenant, keyID: String, requestID: String? = nil, client: String? = nil) {
            self.tenant = tenant
            self.keyID = keyID
            self.requestID = requestID
            self.client = client
        }
    }

    /// One ticket per notification, in request order: pending for those sent, the refusal for the others.
    package var tickets: [Ticket] = []
    package var deliveries: [Delivery] = []
    package var refused: [Refused] = []
    /// The refusals' receipts, usage and audit records, written with the outcomes (or at once when nothing is sent).
    package var writes = RecordWrites()

    /// A request of `count` notifications fits the tenant's burst, or can never be admitted.
    package static func checkSize(_ count: Int, limits: RateLimits) throws(RequestRefusal) {
        guard count <= limits.burst else { throw .exceedsBurst(count: count, burst: limits.burst) }
    }

    /// Plans a request the tenant's bucket has admitted.
    ///
    /// - Parameters:
    ///   - configuredProviders: The providers each app has credentials for, by app.
    ///   - receiptID: makes a new receipt id (time-ordered UUIDs in the relay).
    ///   - fingerprint: the keyed fingerprint of a push's token, which is all that receipts and the audit log keep.
    ///   - allowDevice: takes one notification from a token fingerprint's per-minute allowance; `false` when none
    ///     is left.
    ///   - rateRefusal: the tenant's limits' word on the notification at an index, asked after the policy checks:
    ///     `nil` when the bucket (or, for a critical alert, the critical reserve) admitted it, else the refusal and
    ///     when to try again (an ordinary notification of a request whose critical alerts went out beyond the bucket,
    ///     or a critical alert beyond a spent reserve).
    ///   - allowCriticalDevice: as `allowDevice` for a critical alert, which has its own per-device allowance; `nil`
    ///     uses `allowDevice`.
    package init(
        _ pushes: [ResolvedPush],
        origin: Origin,
        configuredProviders: [String: Set<Provider>],
        now: Date,
        receiptLifetime: TimeInterval,
        receiptID: () -> String,
        fingerprint: (ResolvedPush) -> String,
        allowDevice: (String) -> Bool,
        rateRefusal: (Int) -> (refusal: RelayRefusal, retryAfter: Duration?)? = { _ in nil },
        allowCriticalDevice: ((String) -> Bool)? = nil
    ) {
        let tenant = origin.tenant
        let expires = now.addingTimeInterval(receiptLifetime)
        tickets.reserveCapacity(pushes.count)
        for (index, var push) in pushes.enumerated() {
            let id = receiptID()
            let tokenFingerprint = fingerprint(push)
            push.criticalChannel = tenant.criticalChannel
            push.app = push.message.app ?? tenant.defaultApp
            push.stampLiveActivity(at: now)
            let policy: RelayRefusal? =
                if push.isCritical && !tenant.allowCriticalAlerts {
                    .criticalAlertsNotAllowed
                } else if !tenant.allows(app: push.app) {
                    .appNotAllowed
                } else if !tenant.allows(push.provider) {
                    .providerNotAllowed
                } else if configuredProviders[push.app]?.contains(push.provider) != true {
                    .providerNotConfigured
                } else {
                    nil
                }
            let limited = policy == nil ? rateRefusal(index) : nil
            let ownDeviceLimit = push.isCritical && allowCriticalDevice != nil
            let refusal: RelayRefusal? =
                if let policy {
                    policy
                } else if let limited {
                    limited.refusal
                } else if ownDeviceLimit, let allowCriticalDevice, !allowCriticalDevice(tokenFingerprint) {
                    .messageRateExceeded
                } else if !ownDeviceLimit && !allowDevice(tokenFingerprint) {
                    .messageRateExceeded
                } else {
                    nil
                }
            let record = NotificationRecord(
                receipt: Receipt(
                    id: id,
                    tenantID: tenant.id,
                    keyID: origin.keyID,
                    provider: push.provider,
                    tokenFingerprint: tokenFingerprint,
                    isCritical: push.isCritical,
                    status: .pending,
                    createdAt: now,
                    updatedAt: now,
                    expiresAt: expires,
                    app: push.app,
                    liveActivityEvent: push.message.liveActivity?.event
                ),
                tenantName: tenant.name,
                requestID: origin.requestID,
                client: origin.client
            )
            guard let refusal else {
                // APNs: the receipt id (a UUID) is the `apns-id`, fixed now, so that every send of the notification,
                // a resend after a restart included, carries the same one, and Apple's logs name the receipt.
                if push.provider == .apns { push.apnsID = UUID(text: id) }
                tickets.append(Ticket(id: id, provider: push.provider, state: .pending))
                deliveries.append(Delivery(index: index, push: push, record: record))
                continue
            }
            // A device over its allowance may send again once one notification's worth of the minute has passed.
            let retryAfter: Duration? =
                if let limited {
                    limited.retryAfter
                } else if refusal == .messageRateExceeded {
                    .seconds(max(1, 60 / max(1, tenant.limits.perDevicePerMinute)))
                } else {
                    nil
                }
            let outcome = DeliveryOutcome.refused(refusal, retryAfter: retryAfter)
            tickets.append(Ticket(id: id, provider: push.provider, state: Ticket.State(outcome)))
            refused.append(Refused(index: index, refusal: refusal, record: record))
            record.record(.final(outcome), at: now, into: &writes)
        }
    }
}

/// The critical alerts of a request that may go beyond the tenant's bucket, daily quota and per-device limit, within
/// its critical reserve: those of a tenant allowed to send critical alerts (the others are refused anyway).
package struct CriticalHeadroom: Sendable {
    package let tenant: Tenant
    /// Their places in the request, in order: when the reserve has room for only some, the first go.
    package let criticals: [Int]

    package init(_ pushes: [ResolvedPush], tenant: Tenant) {
        self.tenant = tenant
        self.criticals = tenant.allowCriticalAlerts ? pushes.indices.filter { pushes[$0].isCritical } : []
    }
}
