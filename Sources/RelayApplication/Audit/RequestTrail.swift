import Synchronization

/// What the audit log needs to know about one request, filled in as the request goes: its id and client by the
/// responder, its tenant and key id once they are known (even when authentication then fails, the key id a caller
/// presented is kept, never the key).
///
/// A class, shared by the copies of the request context that Hummingbird hands to each stage, so that what a handler
/// learns reaches the responder that writes the record of a refused request.
package final class RequestTrail: Sendable {
    package struct Fields: Sendable, Equatable {
        package var requestID: String?
        package var client: String?
        package var tenantID: String?
        package var keyID: String?
        /// Who acted on `/admin/v1` (`operator:NAME`).
        package var actor: String?
    }

    private let fields = Mutex(Fields())

    package init() {}

    package var current: Fields { fields.withLock { $0 } }

    package func update(_ body: (inout Fields) -> Void) { fields.withLock { body(&$0) } }
}
