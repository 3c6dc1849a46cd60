internal import Foundation
internal import _CryptoExtras

/// Google's OAuth 2 token endpoint for service accounts, `POST /token` with a JWT bearer grant (PROTOCOLS.md §2.3).
///
/// The form body must hold `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` (else 400
/// `unsupported_grant_type`) and an `assertion` (else 400 `invalid_request`). The assertion must be an RS256 JWT
/// (RSASSA-PKCS1-v1_5, SHA-256) signed by the configured service account key, with `iss` = the client e-mail, `aud`
/// = the token URI (``ProviderSimulator/fcmTokenURI``, or the same path on the `:authority` the client used),
/// a `scope` that lists `https://www.googleapis.com/auth/firebase.messaging`, and numeric `iat` and `exp` with
/// `iat` at most 60 s ahead, `exp` in the future and `exp ≤ iat + 3600`. Any failure is 400 `invalid_grant`.
/// Success: 200 `{"access_token": <new>, "expires_in": 3599, "token_type": "Bearer"}`; the token is valid for
/// ``FCMEndpoint`` sends until it expires.
struct FCMTokenEndpoint: Sendable {
    let configuration: ProviderSimulator.Configuration.FCM

    /// The verdict on a token request, found without the simulator's state.
    enum Inspection: Sendable {
        /// Refused: answer this.
        case refused(HTTP2TestResponse)
        /// A valid assertion: issue a token.
        case granted
    }

    /// Inspects a token request.
    ///
    /// - Parameters:
    ///   - request: The request, routed here.
    ///   - tokenURI: ``ProviderSimulator/fcmTokenURI``; the `aud` may also name the `:authority` of the request.
    ///   - now: The current time, for `iat` and `exp`.
    func inspect(_ request: HTTP2TestRequest, tokenURI: String, now: Date) -> Inspection {
        guard request.method == "POST" else {
            return .refused(Self.error(405, "invalid_request", "Only POST is supported."))
        }
        let form = parseForm(request.bodyText)
        guard form["grant_type"] == jwtBearerGrantType else {
            return .refused(
                Self.error(400, "unsupported_grant_type", "Invalid grant_type: \(form["grant_type"] ?? "")"))
        }
        guard let assertion = form["assertion"], !assertion.isEmpty else {
            return .refused(Self.error(400, "invalid_request", "Missing required parameter: assertion"))
        }
        var audiences = [tokenURI]
        if let authority = request.authority {
            audiences.append("https://\(authority)/token")
        }
        if let why = self.problem(with: assertion, audiences: audiences, now: now) {
            return .refused(Self.error(400, "invalid_grant", why))
        }
        return .granted
    }

    /// Why `assertion` is not acceptable, or `nil` when it is.
    func problem(with assertion: String, audiences: [String], now: Date) -> String? {
        guard let jwt = CompactJWT(assertion) else {
            return "Invalid JWT: not a compact JWS with JSON header and claims."
        }
        guard jwt.header["alg"] == "RS256" else {
            return "Invalid JWT: alg must be RS256."
        }
        guard let publicKey = self.configuration.publicKey else {
            return "Invalid JWT Signature: no service account key is configured."
        }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: jwt.signature)
        guard publicKey.isValidSignature(signature, for: jwt.signingInput, padding: .insecurePKCS1v1_5) else {
            return "Invalid JWT Signature."
        }
        guard jwt.claims["iss"] == .string(self.configuration.clientEmail) else {
            return "Invalid grant: account not found"
        }
        guard let audience = jwt.claims["aud"]?.stringValue, audiences.contains(audience) else {
            return "Invalid JWT: Failed audience check."
        }
        let scopes = jwt.claims["scope"]?.stringValue?.split(separator: " ") ?? []
        guard scopes.contains(Substring(firebaseMessagingScope)) else {
            return "Invalid JWT: scope must include \(firebaseMessagingScope)."
        }
        let nowSeconds = now.timeIntervalSince1970
        guard let issuedAt = jwt.claims["iat"]?.numberValue, let expiry = jwt.claims["exp"]?.numberValue,
            issuedAt <= nowSeconds + allowedClockSkew, expiry > nowSeconds, expiry <= issuedAt + maxAssertionLifetime
        else {
            // Google's wording for every iat/exp problem.
            return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                + "Check your iat and exp values in the JWT claim."
        }
        return nil
    }

    /// An RFC 6749 §5.2 error answer.
    static func error(_ status: Int, _ code: String, _ description: String) -> HTTP2TestResponse {
        let body: SimulatorJSON = ["error": .string(code), "error_description": .string(description)]
        return .json(status, body.text)
    }
}

extension ProviderSimulator.State {
    /// Issues an access token for a granted request, or passes a refusal on.
    mutating func fcmTokenRequested(_ inspection: FCMTokenEndpoint.Inspection, now: Date) -> HTTP2TestResponse {
        switch inspection {
        case .refused(let response): return response
        case .granted: break
        }
        self.fcmAccessTokens = self.fcmAccessTokens.filter { $0.value > now }
        let token = "ya29.simulated-" + randomHex(byteCount: 24)
        self.fcmAccessTokens[token] = now + TimeInterval(accessTokenLifetimeSeconds)
        let body: SimulatorJSON = [
            "access_token": .string(token),
            "expires_in": .number(Double(accessTokenLifetimeSeconds)),
            "token_type": "Bearer",
        ]
        return .json(200, body.text, headers: [(name: "cache-control", value: "no-cache, no-store, max-age=0")])
    }
}

/// Parses an `application/x-www-form-urlencoded` body; the last of repeated names wins.
func parseForm(_ text: String) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in text.split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let decode = { (part: Substring) in
            part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(part)
        }
        fields[decode(parts[0])] = parts.count == 2 ? decode(parts[1]) : ""
    }
    return fields
}

/// `count` random bytes as lowercase hex.
func randomHex(byteCount: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<byteCount).map { _ in
        let byte = UInt8.random(in: .min ... .max, using: &generator)
        return (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }.joined()
}

/// RFC 7523 §2.1.
private let jwtBearerGrantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
/// The OAuth scope FCM HTTP v1 needs.
private let firebaseMessagingScope = "https://www.googleapis.com/auth/firebase.messaging"
/// Google: `exp` at most one hour after `iat`.
private let maxAssertionLifetime: TimeInterval = 60 * 60
/// How far in the future an `iat` may be.
private let allowedClockSkew: TimeInterval = 60
/// Google answers `expires_in: 3599`.
private let accessTokenLifetimeSeconds = 3599
