/// A complete request as the test server received it: the pseudo-headers split out, the body fully read.
package struct HTTP2TestRequest: Sendable {
    /// The `:method` pseudo-header, for example `POST`.
    package var method: String
    /// The `:path` pseudo-header, for example `/3/device/abc`.
    package var path: String
    /// The `:authority` pseudo-header, if the client sent one.
    package var authority: String?
    /// The regular headers in arrival order: names lowercased (HTTP/2 requires it), pseudo-headers removed.
    package var headers: [(name: String, value: String)]
    /// The request body, concatenated from every DATA frame.
    package var body: [UInt8]
    /// Which TCP connection carried the request; connections are numbered from 1 in accept order.
    package var connectionID: Int
    /// The HTTP/2 stream ID of the request (odd, increasing per connection).
    package var streamID: Int

    package init(
        method: String,
        path: String,
        authority: String? = nil,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = [],
        connectionID: Int = 0,
        streamID: Int = 0
    ) {
        self.method = method
        self.path = path
        self.authority = authority
        self.headers = headers
        self.body = body
        self.connectionID = connectionID
        self.streamID = streamID
    }

    /// The value of the first header called `name` (compared case-insensitively), or `nil`.
    package func header(_ name: String) -> String? {
        let name = name.lowercased()
        return self.headers.first { $0.name == name }?.value
    }

    /// The body decoded as UTF-8, replacing invalid sequences.
    package var bodyText: String {
        String(decoding: self.body, as: UTF8.self)
    }
}
