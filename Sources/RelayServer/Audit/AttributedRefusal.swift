/// A refusal on its way out of the router, with what the layers it passed knew of its subject.
///
/// Contexts are values (each middleware and handler has its own copy), so what an authentication middleware or a
/// handler learns about the caller cannot reach the outer ``RefusalAuditMiddleware`` through the context. It travels
/// with the error instead: each layer that knows something (``TenantAuthentication``: key id and tenant;
/// ``OperatorAuthentication``: the actor; the admin API: the tenant and key in the path) wraps the error or adds
/// what it lacks (``RefusalSubject/attributing(_:)``), and ``RefusalAuditMiddleware`` records it with the request's
/// origin and passes the plain ``RelayHTTPError`` on. Nothing outside the router sees one.
struct AttributedRefusal: Error {
    /// The error as the caller sees it.
    var error: RelayHTTPError
    var subject: RefusalSubject

    init(_ error: RelayHTTPError, subject: RefusalSubject) {
        self.error = error
        self.subject = subject
    }
}
