package import Foundation
import RelayCore
package import RelayHTTP2
import _CryptoExtras

/// The OAuth 2.0 access token for FCM, obtained with the service account's RS256 assertion (the JWT bearer grant)
/// and cached until shortly before it expires.
package actor FCMAccessTokenProvider: TokenProvider {
    /// Google: `scope` for sending with FCM HTTP v1.
    package static let scope = "https://www.googleapis.com/auth/firebase.messaging"
    /// Renew this long before the token expires.
    package static let renewalMargin: TimeInterval = 5 * 60
    /// Assertions are valid for an hour, Google's maximum.
    private static let assertionLifetime: TimeInterval = 3600

    package let account: ServiceAccount
    private let key: _RSA.Signing.PrivateKey
    private let client: HTTP2Client
    private let now: @Sendable () -> Date
    private var current: (token: String, expires: Date)?
    /// A fetch under way, shared by every caller that needs a token meanwhile.
    private var fetching: Task<(String, Date), any Error>?
    /// How many tokens were fetched, for tests and metrics.
    package private(set) var fetches = 0

    package init(account: ServiceAccount, client: HTTP2Client, now: @escaping @Sendable () -> Date = Date.init) throws {
        self.account = account
        self.key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKey)
        self.client = client
        self.now = now
    }

    /// The cached token, or a new one.
    package func token() async throws -> String {
        if let current, now().addingTimeInterval(Self.renewalMargin) < current.expires { return current.token }
        return try await fetch()
    }

    /// FCM answered a plain 401 for `token`: forget it, unless it was already replaced.
    package func tokenRefused(_ token: String) async throws -> String {
        if let current, current.token != token { return current.token }
        current = nil
        return try await fetch()
    }

    private func fetch() async throws -> String {
        if let fetching { return try await fetching.value.0 }
        let task = Task { try await self.exchange() }
        fetching = task
        defer { fetching = nil }
        let (token, expires) = try await task.value
        current = (token, expires)
        fetches += 1
        return token
    }

    /// Posts the signed assertion to the account's `token_uri`.
    private func exchange() async throws -> (String, Date) {
        let issued = now()
        var header: [String: JSONValue] = ["alg": .string("RS256"), "typ": .string("JWT")]
        if let keyID = account.privateKeyID { header["kid"] = .string(keyID) }
        let assertion = try JWT.make(
            header: header,
            claims: [
                "iss": .string(account.clientEmail), "scope": .string(Self.scope), "aud": .string(account.tokenURI),
                "iat": .int(Int64(issued.timeIntervalSince1970)),
                "exp": .int(Int64(issued.addingTimeInterval(Self.assertionLifetime).timeIntervalSince1970)),
            ]
        ) { input in
            try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        }
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"
        let response = try await client.send(
            HTTP2Request(
                url: account.tokenURI,
                headers: [HTTPHeader("content-type", "application/x-www-form-urlencoded")],
                body: Array(form.utf8)
            ),
            credential: "fcm-oauth:\(account.clientEmail)"
        )
        let reply = JSONValue.decode(response.body)?.objectValue
        guard response.status == 200, let token = reply?["access_token"]?.stringValue else {
            let error = reply?["error"]?.stringValue ?? "HTTP \(response.status)"
            throw FCMAuthError(reason: error)
        }
        let lifetime = reply?["expires_in"]?.numberValue ?? 3600
        return (token, issued.addingTimeInterval(lifetime))
    }
}

/// The token endpoint refused the service account's assertion: an operator configuration problem.
package struct FCMAuthError: Error, Sendable, Equatable {
    package var reason: String
}
