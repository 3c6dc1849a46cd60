/// Why a request got no response.
///
/// A request either ends with a response that really arrived (a non-zero status) or with one of these; a stream
/// reset or a lost connection is never reported as success.
package struct HTTP2Error: Error, Sendable, Hashable, CustomStringConvertible {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The request's deadline passed (queued or in flight).
        case timeout
        /// The caller's task was cancelled.
        case cancelled
        /// The pool is shutting down and admits nothing, or its drain deadline passed.
        case shuttingDown
        /// The pool's queue is full.
        case overloaded
        /// The server reset the stream (RST_STREAM other than a transparent REFUSED_STREAM retry).
        case streamReset
        /// The transfer ended without a response (libcurl's "complete" with response code 0).
        case noResponse
        /// The connection could not be made (DNS, TCP).
        case connectFailed
        /// The connection broke while the request was on it.
        case connectionLost
        /// TLS failed (handshake, certificate).
        case tls
        /// The server did not speak HTTP/2 (ALPN fell back to HTTP/1.1).
        case notHTTP2
        /// An HTTP/2 protocol error.
        case protocolError
        /// The response body exceeded the pool's limit.
        case responseTooLarge
        /// The request itself was unusable (bad URL, bad header).
        case invalidRequest
        /// Anything else libcurl reported.
        case other
    }

    package var kind: Kind
    /// libcurl's result code when libcurl reported the failure.
    package var curlCode: Int?
    /// A short explanation, never containing credentials or request content.
    package var detail: String
    /// A ``Kind/timeout`` of a request that was on a stream when its deadline passed: the server may have received
    /// and acted on it. `false` for a request that timed out queued (never sent) or any other failure.
    package var requestSent: Bool

    package init(_ kind: Kind, curlCode: Int? = nil, detail: String = "", requestSent: Bool = false) {
        self.kind = kind
        self.curlCode = curlCode
        self.detail = detail
        self.requestSent = requestSent
    }

    /// Whether sending the same request again may succeed: the request did not reach the server, or the server
    /// could not answer it. Callers still decide whether their request is safe to repeat.
    package var isRetryable: Bool {
        switch kind {
        case .streamReset, .noResponse, .connectFailed, .connectionLost, .overloaded, .timeout: true
        case .cancelled, .shuttingDown, .tls, .notHTTP2, .protocolError, .responseTooLarge, .invalidRequest, .other:
            false
        }
    }

    package var description: String {
        var text = "HTTP/2 request failed: \(kind.rawValue)"
        if let curlCode { text += " (curl \(curlCode))" }
        if !detail.isEmpty { text += ": \(detail)" }
        return text
    }
}
