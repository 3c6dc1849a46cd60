import Crypto
import Foundation
import HTTP2TestClient
import Testing
import _CryptoExtras

@testable import RelaySimulator

/// One set of demo credentials for the whole test process: RSA-2048 generation is too slow to repeat per test.
let sharedCredentials = Result(catching: { try SimulatorCredentials() })

/// Starts a simulator configured with ``sharedCredentials`` (then `configure`), connects one client, runs `body`, and
/// always closes the client and shuts the simulator down.
func withSimulator(
    _ configure: (inout ProviderSimulator.Configuration) -> Void = { _ in },
    body: (ProviderSimulator, HTTP2TestClient, SimulatorCredentials) async throws -> Void
) async throws {
    let credentials = try sharedCredentials.get()
    var configuration = credentials.simulatorConfiguration()
    configure(&configuration)
    let simulator = try await ProviderSimulator.start(configuration: configuration)
    do {
        let client = try await HTTP2TestClient.connect(port: simulator.port, trusting: simulator.caFilePath)
        do {
            try await body(simulator, client, credentials)
        } catch {
            await client.close()
            throw error
        }
        await client.close()
    } catch {
        try await simulator.shutdown()
        throw error
    }
    try await simulator.shutdown()
}

// MARK: - JWTs, signed here with swift-crypto rather than with anything from the simulator

/// Base64url without padding, written independently of the simulator's decoder.
func base64URL(_ bytes: some DataProtocol) -> String {
    Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// `base64url(header).base64url(claims)` plus a signature made by `sign` over that text.
func compactJWT(header: String, claims: String, sign: (Data) throws -> [UInt8]) rethrows -> String {
    let input = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
    return input + "." + base64URL(try sign(Data(input.utf8)))
}

/// An APNs provider token: ES256 with a raw `R‖S` signature.
func apnsProviderToken(
    key: P256.Signing.PrivateKey,
    keyID: String,
    teamID: String = "DEMOTEAM01",
    issuedAt: Date = Date()
) throws -> String {
    try compactJWT(
        header: #"{"alg":"ES256","kid":"\#(keyID)"}"#,
        claims: #"{"iss":"\#(teamID)","iat":\#(Int(issuedAt.timeIntervalSince1970))}"#
    ) { Array(try key.signature(for: $0).rawRepresentation) }
}

/// A valid provider token for the shared credentials.
func apnsProviderToken(_ credentials: SimulatorCredentials, issuedAt: Date = Date()) throws -> String {
    try apnsProviderToken(key: credentials.apnsPrivateKey, keyID: credentials.apnsKeyID, issuedAt: issuedAt)
}

/// A Google OAuth assertion (RS256), with every claim adjustable.
func googleAssertion(
    _ credentials: SimulatorCredentials,
    audience: String,
    issuer: String? = nil,
    scope: String = "https://www.googleapis.com/auth/firebase.messaging",
    issuedAt: Date = Date(),
    lifetime: TimeInterval = 3600,
    key: _RSA.Signing.PrivateKey? = nil
) throws -> String {
    let iat = Int(issuedAt.timeIntervalSince1970)
    let claims = """
        {"iss":"\(issuer ?? credentials.fcmClientEmail)","scope":"\(scope)","aud":"\(audience)",\
        "iat":\(iat),"exp":\(iat + Int(lifetime))}
        """
    return try compactJWT(
        header: #"{"alg":"RS256","typ":"JWT","kid":"\#(credentials.fcmPrivateKeyID)"}"#,
        claims: claims
    ) {
        Array(try (key ?? credentials.fcmPrivateKey).signature(for: $0, padding: .insecurePKCS1v1_5).rawRepresentation)
    }
}

/// The form body of a JWT bearer grant.
func tokenRequestBody(assertion: String, grantType: String = "urn:ietf:params:oauth:grant-type:jwt-bearer") -> [UInt8] {
    let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
    let encode = { (text: String) in text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
    return Array("grant_type=\(encode(grantType))&assertion=\(encode(assertion))".utf8)
}

// MARK: - Requests

/// The headers of a well-formed APNs alert push.
func apnsHeaders(
    authorization: String?,
    topic: String? = "com.example.oncall",
    pushType: String? = "alert",
    extra: [(String, String)] = []
) -> [(String, String)] {
    var headers: [(String, String)] = [("content-type", "application/json")]
    if let authorization { headers.append(("authorization", authorization)) }
    if let topic { headers.append(("apns-topic", topic)) }
    if let pushType { headers.append(("apns-push-type", pushType)) }
    return headers + extra
}

let alertPayload = Array(#"{"aps":{"alert":{"title":"Incident #12","body":"Primary DB unreachable"}}}"#.utf8)

/// A JSON payload with an `aps` object, padded to exactly `size` bytes.
func apnsPayload(size: Int) -> [UInt8] {
    let empty = #"{"aps":{},"p":""}"#
    return Array(#"{"aps":{},"p":"\#(String(repeating: "x", count: size - empty.utf8.count))"}"#.utf8)
}

/// Sends one APNs push with a fresh valid provider token (or the given headers) to `/3/device/<token>`.
func sendAPNs(
    _ client: HTTP2TestClient,
    _ credentials: SimulatorCredentials,
    token: String = String(repeating: "ab", count: 32),
    headers: [(String, String)]? = nil,
    body: [UInt8] = alertPayload
) async throws -> HTTP2TestClient.Response {
    let headers = try headers ?? apnsHeaders(authorization: "bearer " + apnsProviderToken(credentials))
    return try await client.request(path: "/3/device/\(token)", headers: headers, body: body)
}

/// Exchanges a fresh assertion for an access token.
func fcmAccessToken(
    _ client: HTTP2TestClient,
    _ simulator: ProviderSimulator,
    _ credentials: SimulatorCredentials
) async throws -> String {
    let assertion = try googleAssertion(credentials, audience: simulator.fcmTokenURI)
    let response = try await client.request(
        path: "/token",
        headers: [("content-type", "application/x-www-form-urlencoded")],
        body: tokenRequestBody(assertion: assertion)
    )
    try #require(response.status == 200, "token exchange failed: \(response.bodyText)")
    return try #require(json(response)["access_token"]?.stringValue)
}

/// Sends an FCM message body with `accessToken` to the configured project.
func sendFCM(
    _ client: HTTP2TestClient,
    accessToken: String?,
    body: String,
    project: String = "demo-project"
) async throws -> HTTP2TestClient.Response {
    var headers: [(String, String)] = [("content-type", "application/json")]
    if let accessToken { headers.append(("authorization", "Bearer \(accessToken)")) }
    return try await client.request(
        path: "/v1/projects/\(project)/messages:send", headers: headers, body: Array(body.utf8))
}

/// An FCM message to `token` with string data.
func fcmMessage(token: String) -> String {
    #"{"message":{"token":"\#(token)","data":{"incidentId":"12"},"android":{"priority":"HIGH","ttl":"3600s"}}}"#
}

/// Sends an Expo push body (optionally with an access token).
func sendExpo(
    _ client: HTTP2TestClient,
    body: String,
    accessToken: String? = nil,
    path: String = "/--/api/v2/push/send"
) async throws -> HTTP2TestClient.Response {
    var headers: [(String, String)] = [("content-type", "application/json"), ("accept", "application/json")]
    if let accessToken { headers.append(("authorization", "Bearer \(accessToken)")) }
    return try await client.request(path: path, headers: headers, body: Array(body.utf8))
}

/// The response body as JSON; fails the test when it is not JSON.
func json(_ response: HTTP2TestClient.Response) throws -> SimulatorJSON {
    try #require(SimulatorJSON(parsing: response.body), "not JSON: \(response.bodyText)")
}

/// The `FcmError` `errorCode` of a `google.rpc.Status` body, or `nil` when it has no such detail.
func fcmErrorCode(_ body: SimulatorJSON) -> String? {
    body["error"]?["details"]?.arrayValue?
        .first { $0["@type"] == "type.googleapis.com/google.firebase.fcm.v1.FcmError" }?["errorCode"]?.stringValue
}
