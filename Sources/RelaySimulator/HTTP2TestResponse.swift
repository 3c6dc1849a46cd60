/// What the test server answers on a stream.
///
/// The server always sends `:status` and `content-length`, and `content-type` when there is a body and `headers`
/// names none. Connection-specific headers (`connection`, `keep-alive`, `proxy-connection`, `transfer-encoding`,
/// `upgrade`) are dropped: libcurl 7.88.1 fails the whole connection with `PROTOCOL_ERROR` on them (curl #12172).
package struct HTTP2TestResponse: Sendable {
    /// The `:status` value.
    package var status: Int
    /// Extra response headers; names are lowercased on the wire.
    package var headers: [(name: String, value: String)]
    /// The response body; empty means the HEADERS frame ends the stream.
    package var body: [UInt8]

    package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a UTF-8 JSON body and `content-type: application/json`.
    ///
    /// - Parameters:
    ///   - status: The `:status` value.
    ///   - text: The JSON text, sent as is.
    ///   - headers: Extra headers, for example `apns-id`.
    package static func json(
        _ status: Int,
        _ text: String,
        headers: [(name: String, value: String)] = []
    ) -> HTTP2TestResponse {
        HTTP2TestResponse(
            status: status,
            headers: [(name: "content-type", value: "application/json")] + headers,
            body: Array(text.utf8)
        )
    }
}
