package import RelayApplication
import RelayStore

/// Who a refused request came from, or was about, as far as the relay knew when it refused it: what the audit record
/// of the refusal names besides the request's origin. Never a key or token, only ids.
package struct RefusalSubject: Sendable, Equatable {
    package var tenantID: String?
    package var keyID: String?
    /// Who acted on `/admin/v1` (`operator:NAME`).
    package var actor: String?

    package init(tenantID: String? = nil, keyID: String? = nil, actor: String? = nil) {
        self.tenantID = tenantID
        self.keyID = keyID
        self.actor = actor
    }

    /// An authenticated tenant: its id and its key's.
    package init(_ identity: TenantIdentity) {
        self.init(tenantID: identity.tenant.id, keyID: identity.keyID)
    }

    /// What a failed authentication learnt: the key id presented and, when the key was good, its tenant.
    package init(_ failure: AuthenticationFailure) {
        self.init(tenantID: failure.tenantID, keyID: failure.keyID)
    }

    /// This subject, with what it does not know taken from `outer` (a layer further out, which knows less).
    func filled(from outer: RefusalSubject) -> RefusalSubject {
        RefusalSubject(
            tenantID: tenantID ?? outer.tenantID,
            keyID: keyID ?? outer.keyID,
            actor: actor ?? outer.actor
        )
    }

    /// Runs `body`, attributing its refusals to this subject: a ``RelayHTTPError`` leaves as an
    /// ``AttributedRefusal`` naming it, and an ``AttributedRefusal`` from further in keeps what it knows and gains
    /// the rest from this one.
    func attributing<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as RelayHTTPError {
            throw AttributedRefusal(error, subject: self)
        } catch let refusal as AttributedRefusal {
            throw AttributedRefusal(refusal.error, subject: refusal.subject.filled(from: self))
        }
    }
}
