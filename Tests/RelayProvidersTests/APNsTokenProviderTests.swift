import Crypto
import Foundation
import Testing

@testable import RelayProviders

@Suite struct APNsTokenProviderTests {
    let key = P256.Signing.PrivateKey()

    func decode(_ token: String) throws -> (header: [String: Any], claims: [String: Any], signature: Data, input: Data)
    {
        let parts = token.split(separator: ".")
        try #require(parts.count == 3)
        let header = try #require(JWT.decodeBase64URL(parts[0]))
        let claims = try #require(JWT.decodeBase64URL(parts[1]))
        let signature = try #require(JWT.decodeBase64URL(parts[2]))
        return (
            try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any]),
            try #require(try JSONSerialization.jsonObject(with: claims) as? [String: Any]),
            signature,
            Data("\(parts[0]).\(parts[1])".utf8)
        )
    }

    @Test func tokenIsAnES256JWTWithNumericIatAndRawSignature() async throws {
        let clock = TestClock()
        let provider = APNsTokenProvider(teamID: "TEAM123456", keyID: "KEY1234567", key: key, now: { clock.now })
        let token = try await provider.token()
        let (header, claims, signature, input) = try decode(token)
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "KEY1234567")
        #expect(claims["iss"] as? String == "TEAM123456")
        #expect((claims["iat"] as? NSNumber)?.intValue == 1_800_000_000, "iat is a JSON number in seconds")
        #expect(!(claims["iat"] is String))
        #expect(signature.count == 64, "raw R‖S, not DER")
        let parsed = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        #expect(key.publicKey.isValidSignature(parsed, for: input))
        #expect(!token.contains("="), "base64url without padding")
    }

    @Test func oneSignatureServesAThousandSends() async throws {
        let clock = TestClock()
        let provider = APNsTokenProvider(teamID: "TEAM123456", keyID: "KEY1234567", key: key, now: { clock.now })
        var tokens: Set<String> = []
        for _ in 0..<1000 {
            tokens.insert(try await provider.token())
            clock.advance(by: 1)  // 1,000 s: well inside the renewal age
        }
        #expect(tokens.count == 1)
        #expect(await provider.signatures == 1)
    }

    @Test func tokenIsRenewedAfterFiftyMinutesNotBefore() async throws {
        let clock = TestClock()
        let provider = APNsTokenProvider(teamID: "TEAM123456", keyID: "KEY1234567", key: key, now: { clock.now })
        let first = try await provider.token()
        clock.advance(by: 49 * 60)
        #expect(try await provider.token() == first)
        clock.advance(by: 60)
        let second = try await provider.token()
        #expect(second != first)
        #expect(await provider.signatures == 2)
        #expect((try decode(second).claims["iat"] as? NSNumber)?.intValue == 1_800_000_000 + 50 * 60)
    }

    @Test func expiredTokenIsRenewedOnceForManyRequests() async throws {
        let clock = TestClock()
        let provider = APNsTokenProvider(teamID: "TEAM123456", keyID: "KEY1234567", key: key, now: { clock.now })
        let stale = try await provider.token()
        clock.advance(by: 5)
        let renewed = try await provider.tokenRefused(stale)
        // A second request that failed with the same stale token gets the renewed one, without another signature.
        #expect(try await provider.tokenRefused(stale) == renewed)
        #expect(renewed != stale)
        #expect(await provider.signatures == 2)
    }

    @Test func p8KeyLoadsFromPKCS8PEM() throws {
        let loaded = try APNsTokenProvider.loadKey(pem: key.pemRepresentation)
        #expect(loaded.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----"))
    }
}
