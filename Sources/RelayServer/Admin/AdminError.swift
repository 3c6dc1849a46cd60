import HTTPTypes
import Hummingbird
import RelayApplication
import RelayCore

/// The errors of `/admin/v1`, in the relay's JSON error shape (``RelayHTTPError``).
///
/// Kept in their own namespace so that they cannot be mistaken for (or collide with) the tenant API's errors:
/// `UNAUTHORIZED` here asks for an operator token, not a tenant key.
enum AdminError {
    /// No usable operator token: missing, malformed, a tenant key, unknown, revoked, or a wrong secret. Never says
    /// which.
    static let unauthorized = RelayHTTPError(
        .unauthorized,
        code: .unauthorized,
        message: "A valid operator token is required (Authorization: Bearer pro_…).",
        headers: [.wwwAuthenticate: "Bearer"]
    )

    /// A write by a read-only (auditor) token.
    static let forbidden = RelayHTTPError(
        .forbidden,
        code: .forbidden,
        message: "This operator token is read-only (role auditor); it may not change anything."
    )

    static let storeUnavailable = RelayHTTPError(
        .serviceUnavailable,
        code: .storeUnavailable,
        message: "The relay's store is unavailable."
    )

    /// The change is stored but its audit record is not (the store failed in between, or the relay is shutting down).
    static let auditNotStored = RelayHTTPError(
        .serviceUnavailable,
        code: .storeUnavailable,
        message: "The change was stored, but its audit record could not be written; check the relay's store and logs."
    )

    static func conflict(_ message: String) -> RelayHTTPError {
        RelayHTTPError(.conflict, code: .conflict, message: message)
    }

    /// How the API answers a ``TenantAdministration/Failure``: 400 naming each field, 404, 409 or 503, with the
    /// failure's own message (never the store's error).
    static func failure(_ failure: TenantAdministration.Failure) -> RelayHTTPError {
        switch failure {
        case .invalid(let violations):
            RelayHTTPError(
                validation: ValidationFailure(
                    issues: violations.map { ValidationIssue(JSONPath($0.field.rawValue), $0.message) }
                )
            )
        case .tenantNotFound, .keyNotFound, .operatorNotFound:
            RelayHTTPError(.notFound, code: .notFound, message: failure.message)
        case .tenantDeleted, .nameTaken, .keyNotActive, .tooManyActiveKeys, .operatorNameTaken:
            conflict(failure.message)
        case .storeUnavailable:
            storeUnavailable
        case .auditNotStored:
            auditNotStored
        }
    }

    /// One validation problem at `path` (a body field or a query parameter).
    static func invalid(_ path: String, _ message: String) -> RelayHTTPError {
        RelayHTTPError(validation: ValidationFailure(issues: [ValidationIssue(path: path, message: message)]))
    }
}
