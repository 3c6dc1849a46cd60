package import Foundation

/// An audit record before it is chained: everything a caller knows about an event.
///
/// Callers build entries; ``AuditChain/append(_:)`` gives each its place (`chain`, `seq`) and its `link`, turning it
/// into an ``AuditRecord``. All fields but the time and the event are optional, and an absent field is left out of
/// the canonical bytes entirely (it is not hashed as `null`).
package struct AuditEntry: Sendable, Equatable {
    /// Milliseconds since 1970, UTC: the stored, hashed form of ``time``.
    package var timeMillis: Int64
    package var event: AuditEvent
    package var tenantID: String?
    package var keyID: String?
    package var requestID: String?
    /// The client's address.
    package var client: String?
    package var provider: String?
    /// The token's HMAC fingerprint; never the token itself.
    package var tokenFingerprint: String?
    package var critical: Bool?
    /// `ok`, a provider reason (`DeviceNotRegistered`), a refusal code (`UNAUTHORIZED`, `TOO_MANY_REQUESTS`,
    /// `VALIDATION_ERROR`), or for admin actions the action's name (`tenant.update`).
    package var outcome: String?
    package var upstreamStatus: Int?
    package var upstreamReason: String?
    package var attempts: Int?
    package var latencyMillis: Int?
    /// Who performed an admin action, e.g. `operator:alice` or `cli`.
    package var actor: String?
    /// The state an admin action changed, before and after (never secrets).
    package var before: JSONValue?
    package var after: JSONValue?
    /// Free text such as the paths of validation errors.
    package var detail: String?
    /// A push's app (`[apps.<name>]`); absent for the default app, as for every record written before there were
    /// several apps.
    package var app: String?

    /// The time at millisecond precision.
    package var time: Date {
        get { AuditTime.date(millis: timeMillis) }
        set { timeMillis = AuditTime.millis(newValue) }
    }

    package init(
        timeMillis: Int64,
        event: AuditEvent,
        tenantID: String? = nil,
        keyID: String? = nil,
        requestID: String? = nil,
        client: String? = nil,
        provider: String? = nil,
        tokenFingerprint: String? = nil,
        critical: Bool? = nil,
        outcome: String? = nil,
        upstreamStatus: Int? = nil,
        upstreamReason: String? = nil,
        attempts: Int? = nil,
        latencyMillis: Int? = nil,
        actor: String? = nil,
        before: JSONValue? = nil,
        after: JSONValue? = nil,
        detail: String? = nil,
        app: String? = nil
    ) {
        self.timeMillis = timeMillis
        self.event = event
        self.tenantID = tenantID
        self.keyID = keyID
        self.requestID = requestID
        self.client = client
        self.provider = provider
        self.tokenFingerprint = tokenFingerprint
        self.critical = critical
        self.outcome = outcome
        self.upstreamStatus = upstreamStatus
        self.upstreamReason = upstreamReason
        self.attempts = attempts
        self.latencyMillis = latencyMillis
        self.actor = actor
        self.before = before
        self.after = after
        self.detail = detail
        self.app = app
    }
}
