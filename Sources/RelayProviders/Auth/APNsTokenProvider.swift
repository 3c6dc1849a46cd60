package import Crypto
package import Foundation
import RelayCore

/// The APNs provider token (ES256 JWT) for one signing key, cached and renewed well inside Apple's window.
///
/// Apple: a token older than an hour is refused (`ExpiredProviderToken`), and a new token on a connection more often
/// than every 20 minutes is throttled (`TooManyProviderTokenUpdates`). So one token is shared by every request and
/// connection of the key and renewed at ``renewalAge`` (50 minutes); it is never made per request.
package actor APNsTokenProvider: TokenProvider {
    /// Renew once the token is this old (inside Apple's 20–60 minute window).
    package static let renewalAge: TimeInterval = 50 * 60

    package let teamID: String
    package let keyID: String
    private let key: P256.Signing.PrivateKey
    private let now: @Sendable () -> Date
    private var current: (token: String, issuedAt: Date)?
    /// How many tokens were signed, for tests and metrics.
    package private(set) var signatures = 0

    package init(
        teamID: String, keyID: String, key: P256.Signing.PrivateKey, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.teamID = teamID
        self.keyID = keyID
        self.key = key
        self.now = now
    }

    /// Reads a `.p8` file: a PKCS#8 PEM EC P-256 private key.
    package static func loadKey(pem: String) throws -> P256.Signing.PrivateKey {
        try P256.Signing.PrivateKey(pemRepresentation: pem)
    }

    /// The current token, made or renewed when needed.
    package func token() throws -> String {
        let date = now()
        if let current, date.timeIntervalSince(current.issuedAt) < Self.renewalAge,
            date >= current.issuedAt.addingTimeInterval(-60)
        {
            return current.token
        }
        return try renew(at: date)
    }

    /// APNs answered `ExpiredProviderToken` for `token`: renew, unless another request already did.
    package func tokenRefused(_ token: String) throws -> String {
        if let current, current.token != token { return current.token }
        return try renew(at: now())
    }

    private func renew(at date: Date) throws -> String {
        // `iat` is a JSON number (RFC 7519 NumericDate) in whole seconds; the signature is raw R‖S (RFC 7518 §3.4).
        let token = try JWT.make(
            header: ["alg": .string("ES256"), "kid": .string(keyID)],
            claims: ["iss": .string(teamID), "iat": .int(Int64(date.timeIntervalSince1970))]
        ) { input in
            try key.signature(for: input).rawRepresentation
        }
        current = (token, date)
        signatures += 1
        return token
    }
}
