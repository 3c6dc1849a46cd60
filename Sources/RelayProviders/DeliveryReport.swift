package import RelayCore

/// What happened to one notification: its outcome and how it got there.
package struct DeliveryReport: Sendable, Equatable {
    package var outcome: DeliveryOutcome
    /// Attempts made upstream (0 when the message was refused before sending, such as too big).
    package var attempts: Int
    /// The last upstream HTTP status, when one arrived.
    package var upstreamStatus: Int?
    /// The last upstream reason or error code, when one arrived.
    package var upstreamReason: String?
    /// From the first attempt to the outcome.
    package var latency: Duration
    /// Expo accepted the message (its ticket is ok); the final outcome comes with the receipt, by ticket id.
    package var receiptPending: Bool

    package init(
        outcome: DeliveryOutcome,
        attempts: Int,
        upstreamStatus: Int? = nil,
        upstreamReason: String? = nil,
        latency: Duration = .zero,
        receiptPending: Bool = false
    ) {
        self.outcome = outcome
        self.attempts = attempts
        self.upstreamStatus = upstreamStatus
        self.upstreamReason = upstreamReason
        self.latency = latency
        self.receiptPending = receiptPending
    }
}

/// Sends notifications to one provider.
package protocol PushSender: Sendable {
    var provider: Provider { get }
    /// Sends every push (all of this sender's provider), retrying as the answers allow, and reports each outcome in
    /// the order given. Never throws: every failure is an outcome.
    func send(_ pushes: [ResolvedPush]) async -> [DeliveryReport]
}
