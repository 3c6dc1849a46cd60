import Foundation
package import Logging
import Metrics
package import RelayCore
import RelayProviders
import RelayStore

extension Relay {
    /// Answers a push request as a dry run: what the relay would do with each notification and the request it would
    /// send upstream, with nothing sent, admitted or stored.
    ///
    /// The notifications go through ``AdmissionPlan`` as a push's do, so a dry run refuses what a push would refuse
    /// for policy (critical alerts, apps, providers, credentials), and each one that would be sent is built by its
    /// app's sender (``PreviewingSender``) as a send builds it, at the relay's time now; an APNs notification's
    /// `apns-id`, a push's receipt id, is a fresh time-ordered UUID that names no receipt. Nothing is taken from the
    /// tenant's bucket, daily quota, critical reserve or per-device allowance, and they are not consulted: the dry
    /// run answers for a request they admit. No receipt, usage or journal entry is written; one audit record is
    /// (``AuditEvent/dryRun``).
    ///
    /// A dry run builds every payload, so it is a lookup, not a push: it takes one from the tenant's lookup budget
    /// (``admitLookup(tenantID:)``), shared with receipt lookups.
    ///
    /// - Throws: ``RequestRefusal/receiptLookupsExhausted(retryAfter:)`` when the lookup budget is used up.
    package func dryRun(
        _ pushes: [ResolvedPush],
        identity: TenantIdentity,
        origin: RequestOrigin = RequestOrigin(),
        logger requestLogger: Logger
    ) async throws(RequestRefusal) -> DryRun {
        let tenant = identity.tenant
        try admitLookup(tenantID: tenant.id)
        let date = clock.date
        var receiptIDs = UUID.timeOrdered(count: pushes.count, at: date).makeIterator()
        let plan = AdmissionPlan(
            pushes,
            origin: AdmissionPlan.Origin(
                tenant: tenant, keyID: identity.keyID, requestID: origin.requestID, client: origin.client),
            configuredProviders: apps.providers,
            now: date,
            receiptLifetime: settings.receiptLifetime,
            receiptID: { (receiptIDs.next() ?? UUID.timeOrdered(at: date)).lowercaseString },
            // Nothing of the plan is stored: no fingerprint is needed, and no device's allowance is spent.
            fingerprint: { _ in "" },
            allowDevice: { _ in true }
        )
        let senders = apps
        let dryRun = DryRun(plan) { delivery in
            let sender = senders.sender(app: delivery.push.app, provider: delivery.push.provider)
            return (sender as? any PreviewingSender)?.preview(delivery.push, now: date)
        }
        do {
            try await commits.submit(
                StoreBatch(), audit: [dryRun.auditEntry(identity: identity, origin: origin, at: date)])
        } catch {
            // The answer holds nothing that was sent or stored: it is given anyway, and the log says the record is
            // missing.
            requestLogger.error("Audit record of a dry run not stored", metadata: ["error": "\(error)"])
        }
        return dryRun
    }

    /// Takes one lookup from the tenant's lookup budget (receipt lookups and dry runs: 2 a second, 60 at once,
    /// apart from its sends: ``RateLimiterRegistry/receiptLookups``).
    ///
    /// - Throws: ``RequestRefusal/receiptLookupsExhausted(retryAfter:)`` when it is used up, with when one fits again.
    package func admitLookup(tenantID: String) throws(RequestRefusal) {
        guard case .denied(let wait) = limiters.admitReceiptLookup(tenantID: tenantID, now: clock.date) else { return }
        Counter(label: "relay_rate_limited_total", dimensions: [("reason", "receipt_lookups")]).increment()
        throw .receiptLookupsExhausted(retryAfter: max(1, Int(wait.rounded(.up))))
    }
}
