import Foundation
package import RelayCore
import RelayHTTP2

/// One attempt's answer for one message, classified: the verdict, and what the upstream said.
package struct AttemptResult: Sendable, Equatable {
    package var verdict: UpstreamVerdict
    /// The upstream's HTTP status, when an answer arrived.
    package var status: Int?
    /// The upstream's reason or error code, or what failed when no answer arrived.
    package var reason: String?

    package init(verdict: UpstreamVerdict, status: Int? = nil, reason: String? = nil) {
        self.verdict = verdict
        self.status = status
        self.reason = reason
    }

    /// Classifies a failure that produced no upstream answer.
    package init(failure error: any Error) {
        guard let error = error as? HTTP2Error else {
            if let auth = error as? FCMAuthError {
                self.init(verdict: .final(.configurationError(reason: "OAuth: \(auth.reason)")), reason: auth.reason)
            } else if error is CancellationError {
                self.init(verdict: .final(.unavailable(reason: "cancelled", retryAfter: nil)), reason: "cancelled")
            } else {
                self.init(verdict: .final(.configurationError(reason: "credential: \(error)")), reason: "credential")
            }
            return
        }
        let reason = "transport: \(error.kind.rawValue)"
        switch error.kind {
        case .tls, .notHTTP2, .invalidRequest:
            // The upstream's address, certificate or protocol is wrong: the operator's set-up.
            self.init(verdict: .final(.configurationError(reason: reason)), reason: reason)
        case .cancelled, .shuttingDown, .responseTooLarge, .protocolError, .other:
            self.init(verdict: .final(.unavailable(reason: reason, retryAfter: nil)), reason: reason)
        case .timeout, .overloaded, .streamReset, .noResponse, .connectFailed, .connectionLost:
            let otherwise = DeliveryOutcome.unavailable(reason: reason, retryAfter: nil)
            self.init(verdict: .retry(notBefore: nil, freshConnection: false, otherwise: otherwise), reason: reason)
        }
    }
}

extension HTTP2Response {
    /// The `retry-after` header, when it gives seconds.
    var retryAfter: Duration? {
        guard let value = header("retry-after"), let seconds = Int(value.trimmingCharacters(in: .whitespaces)),
            seconds >= 0
        else { return nil }
        return .seconds(seconds)
    }
}
