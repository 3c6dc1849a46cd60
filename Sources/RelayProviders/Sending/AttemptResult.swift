import Foundation
package import RelayCore
import RelayHTTP2

/// One attempt's answer, classified.
struct AttemptResult: Sendable {
    var verdict: UpstreamVerdict
    var status: Int?
    var reason: String?
}

/// Classifies a failure that produced no upstream answer.
func transportFailure(_ error: any Error) -> AttemptResult {
    guard let error = error as? HTTP2Error else {
        if let auth = error as? FCMAuthError {
            return AttemptResult(verdict: .final(.configurationError(reason: "OAuth: \(auth.reason)")), reason: auth.reason)
        }
        if error is CancellationError {
            return AttemptResult(verdict: .final(.unavailable(reason: "cancelled", retryAfter: nil)), reason: "cancelled")
        }
        return AttemptResult(verdict: .final(.configurationError(reason: "credential: \(error)")), reason: "credential")
    }
    let reason = "transport: \(error.kind.rawValue)"
    switch error.kind {
    case .tls, .notHTTP2, .invalidRequest:
        // The upstream's address, certificate or protocol is wrong: the operator's set-up.
        return AttemptResult(verdict: .final(.configurationError(reason: reason)), reason: reason)
    case .cancelled, .shuttingDown, .responseTooLarge, .protocolError, .other:
        return AttemptResult(verdict: .final(.unavailable(reason: reason, retryAfter: nil)), reason: reason)
    case .timeout, .overloaded, .streamReset, .noResponse, .connectFailed, .connectionLost:
        return AttemptResult(
            verdict: .retry(notBefore: nil, freshConnection: false, otherwise: .unavailable(reason: reason, retryAfter: nil)),
            reason: reason
        )
    }
}

/// Parses a `retry-after` header given in seconds.
func retryAfter(_ value: String?) -> Duration? {
    guard let value, let seconds = Int(value.trimmingCharacters(in: .whitespaces)), seconds >= 0 else { return nil }
    return .seconds(seconds)
}
