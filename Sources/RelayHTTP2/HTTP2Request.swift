/// An HTTP header field.
package struct HTTPHeader: Sendable, Equatable, Hashable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// One request for the pool: method, absolute `https` URL, headers and body.
package struct HTTP2Request: Sendable, Equatable {
    package var method: String
    package var url: String
    package var headers: [HTTPHeader]
    package var body: [UInt8]
    /// How long the request may take in all, queueing included; the pool's default when `nil`.
    package var timeout: Duration?
    /// Open a new connection for this request instead of reusing one (APNs: after `Shutdown`, `IdleTimeout` or
    /// `UnrelatedKeyIdInToken`, the connection that answered is not to be trusted).
    package var freshConnection: Bool

    package init(
        method: String = "POST",
        url: String,
        headers: [HTTPHeader] = [],
        body: [UInt8] = [],
        timeout: Duration? = nil,
        freshConnection: Bool = false
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.freshConnection = freshConnection
    }
}

/// A response that arrived: status, headers, body and timings.
package struct HTTP2Response: Sendable, Equatable {
    package var status: Int
    /// Header fields with lowercase names, in arrival order.
    package var headers: [HTTPHeader]
    package var body: [UInt8]
    package var timings: Timings

    package init(status: Int, headers: [HTTPHeader], body: [UInt8], timings: Timings = .init()) {
        self.status = status
        self.headers = headers
        self.body = body
        self.timings = timings
    }

    /// The first value of a header, by case-insensitive name.
    package func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }

    /// Where a request's time went.
    package struct Timings: Sendable, Equatable {
        /// Waiting in the pool's queue for a free stream.
        package var queued: Duration = .zero
        /// In libcurl, from hand-over to the complete response (connecting included when it had to connect).
        package var transfer: Duration = .zero
        /// Whether this request opened a new connection.
        package var openedConnection: Bool = false

        package init(queued: Duration = .zero, transfer: Duration = .zero, openedConnection: Bool = false) {
            self.queued = queued
            self.transfer = transfer
            self.openedConnection = openedConnection
        }
    }
}
