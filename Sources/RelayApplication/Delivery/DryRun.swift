package import Foundation
package import RelayCore
package import RelayProviders
import RelayStore

/// A push request answered as a dry run: for each notification, in request order, what the relay would do with it
/// (the ticket it would give) and the request it would send upstream. Nothing is sent, admitted, counted or stored.
///
/// Pure: made from an ``AdmissionPlan`` (the same policy refusals as a push: critical alerts, apps, providers) and the
/// senders' previews (``PreviewingSender``: the same builders and settings as a send).
/// ``Relay/dryRun(_:identity:origin:logger:)`` makes the plan without taking anything from the tenant's limits, and
/// writes the one audit record.
package struct DryRun: Sendable, Equatable {
    /// One notification of the request.
    package struct Notification: Sendable, Equatable {
        package var provider: Provider
        /// The app whose credentials it would go with: the message's `app`, or the tenant's default app.
        package var app: String
        /// Critical after normalisation (`isCriticalAlert`, `interruptionLevel: "critical"`, a critical `sound`).
        package var critical: Bool
        /// `pending` when it would be sent; otherwise the error ticket it would get: the relay's own refusal
        /// (`CriticalAlertsNotAllowed`, `AppNotAllowed`, `ProviderNotConfigured`) or a payload over the provider's
        /// limit (`MessageTooBig`).
        package var state: Ticket.State
        /// The request it would go upstream as; `nil` when it would not be sent, or when its sender cannot tell
        /// (one that is not a ``PreviewingSender``, as in tests).
        package var upstream: UpstreamPreview?

        package init(
            provider: Provider, app: String, critical: Bool, state: Ticket.State, upstream: UpstreamPreview? = nil
        ) {
            self.provider = provider
            self.app = app
            self.critical = critical
            self.state = state
            self.upstream = upstream
        }
    }

    package var notifications: [Notification]

    /// The dry run of a plan.
    ///
    /// - Parameter preview: The request a delivery of the plan would go upstream as, or why it would not go (too
    ///   big); `nil` when its sender cannot tell.
    package init(
        _ plan: AdmissionPlan,
        preview: (AdmissionPlan.Delivery) -> Result<UpstreamPreview, MessageTooBig>?
    ) {
        var notifications = plan.tickets.map { ticket in
            Notification(provider: ticket.provider, app: AppName.default, critical: false, state: ticket.state)
        }
        for refused in plan.refused {
            notifications[refused.index].app = refused.record.receipt.app
            notifications[refused.index].critical = refused.record.receipt.isCritical
        }
        for delivery in plan.deliveries {
            var notification = notifications[delivery.index]
            notification.app = delivery.push.app
            notification.critical = delivery.push.isCritical
            switch preview(delivery) {
            case .success(let request): notification.upstream = request
            case .failure(let tooBig): notification.state = Ticket.State(tooBig.outcome)
            case nil: break
            }
            notifications[delivery.index] = notification
        }
        self.notifications = notifications
    }

    /// How many notifications would be sent.
    package var sendable: Int { notifications.count(where: { $0.state == .pending }) }

    /// The dry run's audit record: who asked, and in `detail` how many notifications by provider, how many would be
    /// sent and the refusals by code. Never a token, a fingerprint or any content.
    package func auditEntry(identity: TenantIdentity, origin: RequestOrigin, at date: Date) -> AuditEntry {
        func counts(_ names: [String]) -> String {
            Dictionary(names.map { ($0, 1) }, uniquingKeysWith: +).sorted { $0.key < $1.key }
                .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        var detail = "would send \(sendable) of \(notifications.count)"
        if !notifications.isEmpty { detail += " (\(counts(notifications.map(\.provider.rawValue))))" }
        let refusals = notifications.compactMap { notification -> String? in
            guard case .error(let code, _, _, _) = notification.state else { return nil }
            return code.rawValue
        }
        if !refusals.isEmpty { detail += "; refused: " + counts(refusals) }
        let criticals = notifications.count(where: \.critical)
        if criticals > 0 { detail += "; critical: \(criticals)" }
        return AuditEntry(
            timeMillis: AuditTime.millis(date),
            event: .dryRun,
            tenantID: identity.tenant.id,
            keyID: identity.keyID,
            requestID: origin.requestID,
            client: origin.client,
            detail: detail
        )
    }
}
