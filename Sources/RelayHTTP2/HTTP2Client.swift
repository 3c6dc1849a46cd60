import Foundation
import Synchronization

/// Who a connection speaks for: an origin plus the credential used on it.
///
/// APNs binds a connection to the first signing key and environment used on it, so two keys must never share one;
/// requests with different identities go through different pools, each with its own connections.
package struct UpstreamIdentity: Sendable, Hashable, CustomStringConvertible {
    /// `scheme://host:port`, lowercase.
    package var origin: String
    /// A name for the credential (for example `apns:production:ABC123DEFG`); empty when connections are unbound.
    package var credential: String

    package init(origin: String, credential: String = "") {
        self.origin = origin
        self.credential = credential
    }

    /// The identity of a request URL under a credential; `nil` when the URL has no scheme or host.
    package init?(url: String, credential: String = "") {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        self.init(origin: "\(scheme)://\(host):\(port)", credential: credential)
    }

    package var description: String { credential.isEmpty ? origin : "\(origin) [\(credential)]" }
}

/// Pools by upstream identity, made on first use with one configuration.
package final class HTTP2Client: Sendable {
    package let configuration: HTTP2PoolConfiguration
    private struct State {
        var pools: [UpstreamIdentity: HTTP2Pool] = [:]
        var closed = false
    }
    private let state = Mutex(State())

    package init(configuration: HTTP2PoolConfiguration = .init()) {
        self.configuration = configuration
    }

    /// Sends through the pool of the request's origin and `credential`.
    package func send(_ request: HTTP2Request, credential: String = "") async throws -> HTTP2Response {
        guard let identity = UpstreamIdentity(url: request.url, credential: credential) else {
            throw HTTP2Error(.invalidRequest, detail: "the URL has no scheme or host")
        }
        return try await pool(for: identity).send(request)
    }

    /// The pool of an identity, made when first asked for.
    package func pool(for identity: UpstreamIdentity) throws -> HTTP2Pool {
        try state.withLock { state throws(HTTP2Error) in
            if state.closed { throw HTTP2Error(.shuttingDown, detail: "the client is shut down") }
            if let pool = state.pools[identity] { return pool }
            let pool = try HTTP2Pool(configuration: configuration)
            state.pools[identity] = pool
            return pool
        }
    }

    /// Statistics of every pool.
    package var statistics: [UpstreamIdentity: HTTP2PoolStatistics] {
        state.withLock { $0.pools }.mapValues(\.statistics)
    }

    /// Shuts every pool down gracefully (see ``HTTP2Pool/shutdown(gracePeriod:)``), concurrently.
    package func shutdown(gracePeriod: Duration = .seconds(10)) async {
        let all = state.withLock { state in
            state.closed = true
            return Array(state.pools.values)
        }
        await withTaskGroup(of: Void.self) { group in
            for pool in all {
                group.addTask { await pool.shutdown(gracePeriod: gracePeriod) }
            }
        }
    }
}
