internal import Crypto
internal import Foundation

/// What an APNs `authorization` header says, as far as it can be judged without the clock or the connection.
enum APNsProviderTokenCheck: Sendable, Hashable {
    /// No `authorization` header: 403 `MissingProviderToken`.
    case missing
    /// Not a well-formed, correctly signed ES256 token of the configured team from a known key: 403
    /// `InvalidProviderToken`. `why` is for a human reading a failed test, never sent.
    case invalid(why: String)
    /// A token signed by `keyID`, issued at `issuedAt` (UNIX seconds); expiry and binding are checked later.
    case valid(keyID: String, issuedAt: Double)
}

/// Checks APNs provider tokens (JWT, ES256) against the configured team and keys (PROTOCOLS.md §1.6).
///
/// - Header `{"alg":"ES256","kid":<known key>}`; `typ`, when present, must be `JWT`.
/// - Claims `{"iss":<team>,"iat":<number>}`; a quoted `iat` is refused (APNs tolerates it; PushRelay must not emit it).
/// - Signature: the raw 64-byte `R‖S` (RFC 7518 §3.4), not DER, over `base64url(header).base64url(claims)`.
struct APNsProviderTokenVerifier: Sendable {
    let teamID: String
    let keys: [String: P256.Signing.PublicKey]

    func check(authorization: String?) -> APNsProviderTokenCheck {
        guard let authorization else {
            return .missing
        }
        guard let jwt = bearerCredential(authorization) else {
            return .invalid(why: "authorization is not `bearer <token>`")
        }
        guard let token = CompactJWT(jwt) else {
            return .invalid(why: "not a compact JWT with JSON header and claims")
        }
        guard token.header["alg"] == "ES256" else {
            return .invalid(why: "alg is not ES256")
        }
        if let type = token.header["typ"], type != "JWT" {
            return .invalid(why: "typ is not JWT")
        }
        guard let keyID = token.header["kid"]?.stringValue, let key = self.keys[keyID] else {
            return .invalid(why: "unknown kid")
        }
        guard token.signature.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
            key.isValidSignature(signature, for: token.signingInput)
        else {
            return .invalid(why: "signature is not a valid raw R||S ES256 signature by kid")
        }
        guard token.claims["iss"] == .string(self.teamID) else {
            return .invalid(why: "iss is not the team ID")
        }
        guard let issuedAt = token.claims["iat"]?.numberValue else {
            return .invalid(why: "iat is missing or not a number")
        }
        return .valid(keyID: keyID, issuedAt: issuedAt)
    }
}

/// The credential of an `authorization: Bearer <credential>` header (scheme compared case-insensitively), or `nil`.
func bearerCredential(_ authorization: String) -> Substring? {
    let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
    guard parts.count == 2, parts[0].lowercased() == "bearer" else {
        return nil
    }
    let credential = parts[1].drop { $0 == " " }
    return credential.isEmpty ? nil : credential
}
