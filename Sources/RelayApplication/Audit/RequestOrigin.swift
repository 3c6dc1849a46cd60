/// Where a request came from, as its audit records name it: the request's id and the client's address.
///
/// Plain values, known before the request is routed (the HTTP layer makes one per request, the client address
/// believed from `X-Forwarded-For` only behind a trusted proxy, ``TrustedProxies``), and passed to the core's
/// functions that write audit records; nothing fills them in later.
package struct RequestOrigin: Sendable, Equatable {
    package var requestID: String?
    package var client: String?

    package init(requestID: String? = nil, client: String? = nil) {
        self.requestID = requestID
        self.client = client
    }
}
