package import Foundation
package import RelayCore

/// What a relay does with a notification it resumes from the delivery journal after a restart: send it (again), or,
/// once its deadline has passed, conclude it without sending. Pure: the entry's facts and the time come in.
///
/// Whatever the entry says, the relay that wrote it may have sent the notification before it died: an entry with no
/// earlier send was journaled before its first send (accepted asynchronously), which followed at once; one with
/// earlier sends was in flight. Either way the outcome is unknown. Sending again may deliver it twice, which is why an
/// APNs notification goes again with the same `apns-id`, and why nothing is sent once its deadline (its time to live,
/// capped by the resume window) has passed: it is then concluded `ProviderUnavailable`, "outcome unknown after a
/// restart".
package enum Resumption: Sendable, Equatable {
    /// Send it; `detail` goes into its audit record.
    case send(detail: String)
    /// Conclude it with `outcome` without sending; `detail` goes into its audit record.
    case conclude(DeliveryOutcome, detail: String)

    /// The reason of the ``DeliveryOutcome/unavailable(reason:retryAfter:)`` that concludes a notification found
    /// past its deadline.
    package static let unknownOutcomeReason = "outcome unknown after a restart"

    /// Decides for an entry with `attempts` earlier sends and `deadline`, at `now`.
    package static func decide(attempts: Int, deadline: Date, provider: Provider, now: Date) -> Resumption {
        let state =
            attempts == 0
            ? "resumed after a restart: journaled before its first send"
            : "resumed after a restart: in flight when the relay stopped, outcome unknown"
        guard now < deadline else {
            return .conclude(
                .unavailable(reason: unknownOutcomeReason, retryAfter: nil),
                detail: "\(state); its deadline had passed, not sent again"
            )
        }
        let sameID = provider == .apns ? " with the same apns-id" : ""
        return .send(detail: "\(state); sent again\(sameID)")
    }

    /// When a notification admitted at `admittedAt` may no longer be sent: its expiration or time to live, capped by
    /// `window` after admission (a notification without either may be sent until the window ends).
    package static func deadline(of push: ResolvedPush, admittedAt: Date, window: Duration) -> Date {
        var deadline = admittedAt.addingTimeInterval(TimeInterval(window.components.seconds))
        if let ttl = push.message.ttl { deadline = min(deadline, admittedAt.addingTimeInterval(TimeInterval(ttl))) }
        if let expiration = push.message.expiration {
            deadline = min(deadline, Date(timeIntervalSince1970: TimeInterval(expiration)))
        }
        return deadline
    }
}
