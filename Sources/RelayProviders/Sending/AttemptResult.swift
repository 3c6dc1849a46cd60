import Foundation
package import RelayCore
package import RelayHTTP2

/// One attempt's answer for one message, classified: the verdict, and what the upstream said.
package struct AttemptResult: Sendable, Equatable {
    package var verdict: UpstreamVerdict
    /// The upstream's HTTP status, when an answer arrived.
    package var status: Int?
    /// The upstream's reason or error code, or what failed when no answer arrived.
    package var reason: String?
    /// How the transport failed, when no answer arrived.
    package var transportFailure: HTTP2Error.Kind?
    /// The request was sent and no answer came within `[upstream] timeout_ms`: the upstream may have delivered it,
    /// so sending it again risks a duplicate (``RetryLoop`` bounds those retries). A request that timed out queued,
    /// a connection that could not be made or a refused stream is not this.
    package var timedOutAfterSending: Bool

    package init(
        verdict: UpstreamVerdict,
        status: Int? = nil,
        reason: String? = nil,
        transportFailure: HTTP2Error.Kind? = nil,
        timedOutAfterSending: Bool = false
    ) {
        self.verdict = verdict
        self.status = status
        self.reason = reason
        self.transportFailure = transportFailure
        self.timedOutAfterSending = timedOutAfterSending
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
            self.init(
                verdict: .final(.configurationError(reason: reason)), reason: reason, transportFailure: error.kind)
        case .cancelled, .shuttingDown, .responseTooLarge, .protocolError, .other:
            self.init(
                verdict: .final(.unavailable(reason: reason, retryAfter: nil)), reason: reason,
                transportFailure: error.kind)
        case .timeout, .overloaded, .streamReset, .noResponse, .connectFailed, .connectionLost:
            let otherwise = DeliveryOutcome.unavailable(reason: reason, retryAfter: nil)
            self.init(
                verdict: .retry(notBefore: nil, freshConnection: false, otherwise: otherwise), reason: reason,
                transportFailure: error.kind, timedOutAfterSending: error.kind == .timeout && error.requestSent)
        }
    }

    /// What this result says about the upstream, for its circuit breaker: an answer (below 500, but 429) shows it is
    /// up; no connection, a reset, a lost connection, a timeout or a 5xx is how an outage looks; throttling and the
    /// relay's own refusals (its pool's queue full, shutdown, cancellation, a credential it could not make) say
    /// nothing.
    package var signal: CircuitBreaker.Signal {
        if let transportFailure {
            switch transportFailure {
            case .connectFailed, .timeout, .streamReset, .noResponse, .connectionLost: return .failure
            case .cancelled, .shuttingDown, .overloaded, .tls, .notHTTP2, .protocolError, .responseTooLarge,
                .invalidRequest, .other:
                return .neutral
            }
        }
        guard let status else { return .neutral }
        if status >= 500 { return .failure }
        return status == 429 ? .neutral : .success
    }

    /// Why this result's message goes again, when its verdict asks for that: the `cause` label of
    /// `relay_upstream_retries_total`.
    package var retryCause: RetryCause {
        if let transportFailure {
            switch transportFailure {
            case .connectFailed: return .connectFailed
            case .timeout: return .timeout
            case .streamReset: return .streamReset
            case .connectionLost: return .connectionLost
            case .overloaded: return .overloaded
            case .noResponse, .cancelled, .shuttingDown, .tls, .notHTTP2, .protocolError, .responseTooLarge,
                .invalidRequest, .other:
                return .noResponse
            }
        }
        switch verdict {
        case .refreshCredentialAndRetry:
            return .credential
        case .retry(_, let freshConnection, let otherwise):
            if status == 429 { return .throttled }
            if case .rejected(.messageRateExceeded, _) = otherwise { return .throttled }
            if let status, status >= 500 { return .serverError }
            return freshConnection ? .badConnection : .providerError
        case .final:
            return .providerError
        }
    }
}

/// Why a notification went to its upstream again: the `cause` label of `relay_upstream_retries_total`, a bounded
/// set.
package enum RetryCause: String, Sendable, Hashable, CaseIterable {
    /// No connection could be made (DNS, TCP, connect timeout).
    case connectFailed = "connect_failed"
    /// The request's deadline passed, queued or in flight (a stalled upstream, an unanswered PING).
    case timeout
    /// The upstream reset the stream (not a REFUSED_STREAM, which the pool resends for free).
    case streamReset = "stream_reset"
    /// The connection broke under the request (TCP reset, GOAWAY with the stream processed, PING timeout).
    case connectionLost = "connection_lost"
    /// No usable answer arrived (an answer without its body's required parts counts).
    case noResponse = "no_response"
    /// A 5xx answer.
    case serverError = "server_error"
    /// A 429, or a device over its rate (APNs `TooManyRequests`, Expo `MessageRateExceeded`).
    case throttled
    /// The answer blamed the connection (APNs `IdleTimeout`, `UnrelatedKeyIdInToken`): a fresh one is used.
    case badConnection = "bad_connection"
    /// The relay's own pool had no room for the request.
    case overloaded
    /// The credential was refused as expired: renewed, and sent again at once.
    case credential
    /// The provider reported a transient error for the message itself (an Expo ticket's `ProviderError`).
    case providerError = "provider_error"
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
