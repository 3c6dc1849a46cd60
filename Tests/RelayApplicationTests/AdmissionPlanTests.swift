import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication

/// ``AdmissionPlan`` without a store, a clock or a sender: every refusal kind, their order, mixed batches, the burst.
struct AdmissionPlanTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let apns = String(repeating: "ab", count: 32)
    static let otherAPNs = String(repeating: "cd", count: 32)
    static let fcm = "fcm:" + String(repeating: "Zx9_", count: 30)
    static let expo = "ExponentPushToken[plan]"

    /// Resolved pushes from native messages, as the APIs make them.
    static func pushes(_ messages: String) throws -> [ResolvedPush] {
        var issues: [ValidationIssue] = []
        let json = try #require(JSONValue.decode(Array(messages.utf8)))
        guard case .array(let elements) = json else { throw PlanError.notAnArray }
        return try elements.flatMap { element in
            let message = try #require(PushMessage.parse(element, at: .root, issues: &issues), "\(issues)")
            return message.pushes
        }
    }

    enum PlanError: Error { case notAnArray }

    /// A plan with sequential receipt ids, the token as its own fingerprint and a device allowance from `allowed`.
    static func plan(
        _ pushes: [ResolvedPush],
        tenant: Tenant,
        configured: Set<Provider> = Set(Provider.allCases),
        allowed: @escaping (String) -> Bool = { _ in true },
        rateRefusal: @escaping (Int) -> (refusal: RelayRefusal, retryAfter: Duration?)? = { _ in nil }
    ) -> AdmissionPlan {
        var next = 0
        return AdmissionPlan(
            pushes,
            origin: AdmissionPlan.Origin(tenant: tenant, keyID: "key1", requestID: "req1", client: "192.0.2.1"),
            configuredProviders: [AppName.default: configured],
            now: now,
            receiptLifetime: 3600,
            receiptID: {
                next += 1
                return "r\(next)"
            },
            fingerprint: { "fp-" + $0.token.prefix(8) },
            allowDevice: allowed,
            rateRefusal: rateRefusal
        )
    }

    @Test func everyNotificationAllowedGoesUpstreamWithAPendingTicketAndWritesNothingYet() throws {
        let tenant = Tenant(name: "acme")
        let plan = Self.plan(
            try Self.pushes(#"[{"to":["\#(Self.apns)","\#(Self.fcm)","\#(Self.expo)"],"body":"x"}]"#), tenant: tenant)
        #expect(plan.tickets.map(\.id) == ["r1", "r2", "r3"])
        #expect(plan.tickets.map(\.state) == [.pending, .pending, .pending])
        #expect(plan.deliveries.map(\.index) == [0, 1, 2])
        #expect(plan.deliveries.map(\.record.receipt.status) == [.pending, .pending, .pending])
        #expect(plan.deliveries[0].record.receipt.expiresAt == Self.now.addingTimeInterval(3600))
        #expect(plan.refused.isEmpty && plan.writes.batch.receipts.isEmpty && plan.writes.audit.isEmpty)
    }

    /// Each refusal kind, alone, with its code, receipt, usage column and audit record.
    @Test(arguments: [
        (RelayRefusal.criticalAlertsNotAllowed, OutcomeCode.criticalAlertsNotAllowed, UsageColumn.rejected),
        (.providerNotAllowed, .providerNotConfigured, .rejected),
        (.providerNotConfigured, .providerNotConfigured, .rejected),
        (.messageRateExceeded, .messageRateExceeded, .rateLimited),
        (.appNotAllowed, .appNotAllowed, .rejected),
        (.tenantRateLimited, .tenantRateLimited, .rateLimited),
        (.criticalReserveExhausted, .criticalReserveExhausted, .rateLimited),
    ])
    func eachRefusalKind(_ kind: RelayRefusal, _ code: OutcomeCode, _ column: UsageColumn) throws {
        var tenant = Tenant(name: "acme", limits: RateLimits(perDevicePerMinute: 20), allowCriticalAlerts: true)
        var configured = Set(Provider.allCases)
        var allowed: (String) -> Bool = { _ in true }
        var limited: (Int) -> (refusal: RelayRefusal, retryAfter: Duration?)? = { _ in nil }
        var message = #"[{"to":"\#(Self.apns)","body":"x"}]"#
        switch kind {
        case .criticalAlertsNotAllowed:
            tenant.allowCriticalAlerts = false
            message = #"[{"to":"\#(Self.apns)","body":"x","isCriticalAlert":true}]"#
        case .providerNotAllowed: tenant.allowedProviders = [.fcm]
        case .providerNotConfigured: configured = [.fcm, .expo]
        case .messageRateExceeded: allowed = { _ in false }
        case .appNotAllowed: message = #"[{"to":"\#(Self.apns)","body":"x","app":"beta"}]"#
        case .tenantRateLimited: limited = { _ in (.tenantRateLimited, .seconds(7)) }
        case .criticalReserveExhausted:
            message = #"[{"to":"\#(Self.apns)","body":"x","isCriticalAlert":true}]"#
            limited = { _ in (.criticalReserveExhausted, .seconds(7)) }
        case .shuttingDown: Issue.record("not a refusal of the plan")
        }
        let plan = Self.plan(
            try Self.pushes(message), tenant: tenant, configured: configured, allowed: allowed, rateRefusal: limited)
        #expect(plan.deliveries.isEmpty)
        #expect(plan.refused.map(\.refusal) == [kind] && plan.refused.map(\.index) == [0])
        #expect(plan.refused.map(\.record.receipt.provider) == [.apns])
        let retryAfter: Int? =
            switch kind {
            case .messageRateExceeded: 3  // 60 s / 20 a minute
            case .tenantRateLimited, .criticalReserveExhausted: 7
            default: nil
            }
        #expect(
            plan.tickets == [
                Ticket(
                    id: "r1", provider: .apns,
                    state: .error(code: code, message: kind.message, removeToken: false, retryAfter: retryAfter))
            ])
        let receipt = try #require(plan.writes.batch.receipts.first)
        #expect(receipt.status == .error && receipt.code == code && receipt.message == kind.message)
        #expect(receipt.tokenFingerprint == "fp-abababab" && receipt.keyID == "key1" && receipt.tenantID == tenant.id)
        #expect(
            plan.writes.batch.usage == [
                UsageKey(
                    tenantID: tenant.id, date: Self.now, provider: .apns,
                    // Counted for the app the message named, even one the tenant may not use.
                    app: kind == .appNotAllowed ? "beta" : "default"
                ): {
                    var counts = UsageCounts(column: column)
                    // Refused by the limits one by one: never admitted by the quota.
                    if kind == .tenantRateLimited || kind == .criticalReserveExhausted { counts.notAdmitted = 1 }
                    if message.contains("isCriticalAlert") { counts.critical = 1 }
                    return counts
                }()
            ])
        let audit = try #require(plan.writes.audit.first)
        #expect(
            audit.outcome == code.rawValue && audit.requestID == "req1" && audit.client == "192.0.2.1"
                && audit.attempts == 0)
        #expect(audit.tokenFingerprint == "fp-abababab")
    }

    /// A message's app, or the tenant's default app; each app with its own providers; an app the tenant may not use
    /// is refused before its providers are looked at.
    @Test func eachNotificationGoesWithItsAppOrTheTenantsDefaultApp() throws {
        let tenant = Tenant(name: "acme", apps: ["beta", "default"], defaultApp: "beta")
        var next = 0
        let plan = AdmissionPlan(
            try Self.pushes(
                #"""
                [{"to":"\#(Self.apns)","body":"tenant's default: beta"},
                 {"to":"\#(Self.apns)","body":"named","app":"default"},
                 {"to":"\#(Self.fcm)","body":"beta has no FCM"},
                 {"to":"\#(Self.apns)","body":"not allowed","app":"white-label"}]
                """#),
            origin: AdmissionPlan.Origin(tenant: tenant, keyID: "key1"),
            configuredProviders: ["default": [.apns, .fcm], "beta": [.apns], "white-label": [.apns]],
            now: Self.now,
            receiptLifetime: 3600,
            receiptID: {
                next += 1
                return "r\(next)"
            },
            fingerprint: { "fp-" + $0.token.prefix(8) },
            allowDevice: { _ in true }
        )
        #expect(plan.deliveries.map(\.push.app) == ["beta", "default"])
        #expect(plan.refused.map(\.refusal) == [.providerNotConfigured, .appNotAllowed])
        #expect(plan.refused.map(\.index) == [2, 3])
        #expect(plan.tickets[3].state == Ticket.State(.refused(.appNotAllowed, retryAfter: nil)))
    }

    /// Refusals come in a fixed order, and the device allowance is asked only of notifications nothing else refused.
    @Test func refusalsComeInOrderAndOnlyAllowedNotificationsUseTheDeviceAllowance() throws {
        let tenant = Tenant(name: "acme", allowCriticalAlerts: false, allowedProviders: [.apns, .expo])
        var asked: [String] = []
        let plan = Self.plan(
            try Self.pushes(
                #"""
                [{"to":"\#(Self.apns)","body":"critical","isCriticalAlert":true},
                 {"to":"\#(Self.fcm)","body":"fcm not allowed"},
                 {"to":"\#(Self.expo)","body":"expo not configured"},
                 {"to":"\#(Self.otherAPNs)","body":"over the device limit"},
                 {"to":"\#(Self.apns)","body":"fine"}]
                """#),
            tenant: tenant,
            configured: [.apns, .fcm],
            allowed: { fingerprint in
                asked.append(fingerprint)
                return fingerprint != "fp-cdcdcdcd"
            }
        )
        #expect(
            plan.refused.map(\.refusal) == [
                .criticalAlertsNotAllowed, .providerNotAllowed, .providerNotConfigured, .messageRateExceeded,
            ])
        #expect(plan.refused.map(\.index) == [0, 1, 2, 3])
        #expect(plan.deliveries.map(\.index) == [4])
        #expect(asked == ["fp-cdcdcdcd", "fp-abababab"])
        #expect(plan.tickets.count == 5 && plan.tickets[4].state == .pending)
        #expect(plan.writes.batch.receipts.count == 4 && plan.writes.audit.count == 4)
    }

    @Test func theCriticalChannelTravelsWithEveryPush() throws {
        let tenant = Tenant(name: "acme", allowCriticalAlerts: true, criticalChannel: "pager")
        let plan = Self.plan(
            try Self.pushes(#"[{"to":"\#(Self.fcm)","body":"x","isCriticalAlert":true}]"#), tenant: tenant)
        #expect(plan.deliveries.first?.push.criticalChannel == "pager")
    }

    /// A Live Activity push's receipt records its event from admission, whether it goes upstream or is refused.
    @Test func theReceiptRecordsALiveActivitysEvent() throws {
        let tenant = Tenant(name: "acme")
        let plan = Self.plan(
            try Self.pushes(
                #"""
                [{"to":"\#(Self.apns)","liveActivity":{"event":"update","contentState":{"status":"mitigated"}}},
                 {"to":"\#(Self.otherAPNs)","liveActivity":{"event":"end","contentState":{"status":"resolved"}}},
                 {"to":"\#(Self.apns)","body":"plain"}]
                """#),
            tenant: tenant,
            allowed: { $0 != "fp-cdcdcdcd" }
        )
        #expect(plan.deliveries.map(\.record.receipt.liveActivityEvent) == [.update, nil])
        #expect(plan.refused.map(\.refusal) == [.messageRateExceeded])
        #expect(plan.writes.batch.receipts.map(\.liveActivityEvent) == [.end])
    }

    @Test func theBurstIsTheLargestRequest() {
        let limits = RateLimits(burst: 3)
        #expect(throws: Never.self) { try AdmissionPlan.checkSize(3, limits: limits) }
        #expect(throws: RequestRefusal.exceedsBurst(count: 4, burst: 3)) {
            try AdmissionPlan.checkSize(4, limits: limits)
        }
    }
}
