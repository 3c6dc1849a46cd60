package import RelayHTTP2
import Synchronization

/// Where a sender's requests go: a URL that request paths are appended to, the credential its connections are bound
/// to, and the pool that carries them, looked up once.
///
/// ``HTTP2Client/send(_:credential:)`` finds a request's pool by parsing its URL on every call. A sender knows its
/// upstreams when it is made, so an endpoint parses its URL once, at init, and keeps the pool it gets for its first
/// request (made then, so that an endpoint never used, such as the APNs sandbox of a production relay, costs no pool).
package final class UpstreamEndpoint: Sendable {
    /// What request paths are appended to, such as `https://api.push.apple.com`.
    package let url: String
    /// `nil` when `url` has no scheme or host: every request then fails as invalid, as the client would fail it.
    private let identity: UpstreamIdentity?
    private let client: HTTP2Client
    private let resolved = Mutex<HTTP2Pool?>(nil)

    /// - Parameter credential: names the credential the endpoint's connections are bound to (APNs: environment and
    ///   signing key); requests under different credentials never share a connection.
    package init(url: String, credential: String = "", client: HTTP2Client) {
        self.url = url
        self.identity = UpstreamIdentity(url: url, credential: credential)
        self.client = client
    }

    /// Sends `request`, whose URL starts with ``url``, through the endpoint's pool.
    ///
    /// - Throws: ``HTTP2Error`` when no whole response arrived (`invalidRequest` for an endpoint without scheme or
    ///   host, `shuttingDown` once the client is shut down), or `CancellationError`.
    package func send(_ request: consuming HTTP2Request) async throws -> HTTP2Response {
        try await pool().send(consume request)
    }

    /// Sends `requests`, whose URLs start with ``url``, together through the endpoint's pool and waits until every
    /// one has ended (``HTTP2Pool/send(all:)``); one result per request, in order, with ``send(_:)``'s errors.
    package func send(all requests: consuming [HTTP2Request]) async -> [Result<HTTP2Response, any Error>] {
        let pool: HTTP2Pool
        do {
            pool = try self.pool()
        } catch {
            return Array(repeating: .failure(error), count: requests.count)
        }
        return await pool.send(all: consume requests)
    }

    private func pool() throws -> HTTP2Pool {
        try resolved.withLock { cached in
            if let cached { return cached }
            guard let identity else { throw HTTP2Error(.invalidRequest, detail: "the URL has no scheme or host") }
            let pool = try client.pool(for: identity)
            cached = pool
            return pool
        }
    }
}
