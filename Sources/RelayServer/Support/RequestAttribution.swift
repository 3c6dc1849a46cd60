import Synchronization

/// Who a request turned out to be, learnt inside the route (by authentication) and read by ``RelayResponder`` for
/// the access line and the latency histogram.
///
/// A reference shared by a request's contexts: Hummingbird's child contexts (``TenantRequestContext``) and the
/// middleware's modified copies are values, so a value field set inside the route would never reach the responder
/// that wraps the router. One per request; written once by authentication, read once after the response.
package final class RequestAttribution: Sendable {
    private let state = Mutex<(tenantID: String?, keyID: String?)>((nil, nil))

    package init() {}

    /// Records the authenticated tenant and key.
    package func set(tenantID: String, keyID: String) {
        state.withLock { $0 = (tenantID, keyID) }
    }

    package var tenantID: String? { state.withLock { $0.tenantID } }
    package var keyID: String? { state.withLock { $0.keyID } }
}
