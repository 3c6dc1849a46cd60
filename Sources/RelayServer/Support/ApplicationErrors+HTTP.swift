package import HTTPTypes
import Hummingbird
package import RelayApplication
import RelayCore

extension RelayHTTPError {
    /// The relay's JSON error for a request refused whole (the native and Expo-compatible APIs).
    package init(_ refusal: RequestRefusal) {
        switch refusal {
        case .exceedsBurst(let count, let burst):
            self.init(
                validation: ValidationFailure(issues: [
                    ValidationIssue(
                        path: "",
                        message:
                            "the request carries \(count) notifications, more than this tenant's burst of \(burst); split it"
                    )
                ])
            )
        case .rateLimited(let retryAfter, let quota, let status):
            var headers = status.headers
            headers[.retryAfter] = String(retryAfter)
            self.init(
                .tooManyRequests,
                code: .tooManyRequests,
                message: quota
                    ? "The tenant's daily quota is used up; nothing was sent. It renews at midnight UTC."
                    : "The request exceeds the tenant's rate limit; nothing was sent. Retry after \(retryAfter) s.",
                headers: headers
            )
        case .receiptLookupsExhausted(let retryAfter):
            self.init(
                .tooManyRequests,
                code: .tooManyRequests,
                message:
                    "Too many receipt lookups; retry after \(retryAfter) s. Lookups have their own budget and never use up pushes.",
                headers: [.retryAfter: String(retryAfter)]
            )
        case .shuttingDown: self = .shuttingDown
        case .storeUnavailable: self = .storeUnavailable
        case .unrecorded:
            self.init(
                .serviceUnavailable, code: .storeUnavailable,
                message: "The relay's store failed: " + Ticket.unrecordedMessage)
        case .queueFull(let retryAfter):
            self.init(
                .serviceUnavailable,
                code: .queueFull,
                message:
                    "The relay holds as many notifications as it may ([server] max_pending_notifications); nothing "
                    + "was sent. Retry after \(retryAfter) s.",
                headers: [.retryAfter: String(retryAfter)]
            )
        }
    }
}

/// Runs one of the relay's operations for an HTTP route: a request refused whole becomes the relay's JSON error.
func rendered<T>(_ operation: () async throws(RequestRefusal) -> T) async throws(RelayHTTPError) -> T {
    do {
        return try await operation()
    } catch {
        throw RelayHTTPError(error)
    }
}

extension TenantRateLimiter.Status {
    /// `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`.
    package var headers: HTTPFields {
        var fields = HTTPFields()
        fields[.rateLimitLimit] = String(limit)
        fields[.rateLimitRemaining] = String(remaining)
        fields[.rateLimitReset] = String(reset)
        return fields
    }
}

extension HTTPField.Name {
    // The literals are valid field-name tokens (RFC 9110 §5.1), so `init?` cannot fail: the unwraps are safe.
    static let rateLimitLimit = HTTPField.Name("RateLimit-Limit")!
    static let rateLimitRemaining = HTTPField.Name("RateLimit-Remaining")!
    static let rateLimitReset = HTTPField.Name("RateLimit-Reset")!
    static let requestID = HTTPField.Name("X-Request-ID")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let prefer = HTTPField.Name("Prefer")!
    static let preferenceApplied = HTTPField.Name("Preference-Applied")!
}

extension RelayHTTPError {
    /// The relay's JSON error for a key that was not accepted.
    package init(_ failure: AuthenticationFailure) {
        switch failure.reason {
        case .unauthorized: self = .unauthorized
        case .tenantDisabled: self = .tenantDisabled
        case .storeUnavailable: self = .storeUnavailable
        }
    }
}
