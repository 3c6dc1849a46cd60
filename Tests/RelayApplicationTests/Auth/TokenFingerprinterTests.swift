import Testing

@testable import RelayApplication

/// Token fingerprints are HMAC-SHA-256 under the relay's key, cut to 16 bytes in hex; APNs tokens without regard to
/// case.
@Suite struct TokenFingerprinterTests {
    /// RFC 4231, test case 1: key 20 × 0x0b, data "Hi There".
    static let rfc4231 = TokenFingerprinter(key: Array(repeating: 0x0b, count: 20))

    @Test func aFingerprintIsTheFirstHalfOfTheHMACInHex() {
        #expect(Self.rfc4231.fingerprint("Hi There", provider: "fcm") == "b0344c61d8db38535ca8afceaf0bf12b")
        #expect(Self.rfc4231.fingerprint("Hi There", provider: "expo") == "b0344c61d8db38535ca8afceaf0bf12b")
    }

    @Test func eachFingerprintStartsFromTheKeyAlone() {
        // The keyed state is copied per token, never carried from one token into the next.
        let fingerprinter = TokenFingerprinter(key: Array("relay-key".utf8))
        let first = fingerprinter.fingerprint("token-a", provider: "fcm")
        _ = fingerprinter.fingerprint("token-b", provider: "fcm")
        #expect(fingerprinter.fingerprint("token-a", provider: "fcm") == first)
        #expect(Self.rfc4231.fingerprint("Hi There", provider: "fcm") == "b0344c61d8db38535ca8afceaf0bf12b")
    }

    @Test func apnsTokensAreFingerprintedWithoutRegardToCase() {
        let upper = String(repeating: "AB", count: 32)
        let lower = String(repeating: "ab", count: 32)
        #expect(Self.rfc4231.fingerprint(upper, provider: "apns") == Self.rfc4231.fingerprint(lower, provider: "apns"))
        #expect(Self.rfc4231.fingerprint(upper, provider: "fcm") != Self.rfc4231.fingerprint(lower, provider: "fcm"))
        #expect(Self.rfc4231.fingerprint(lower, provider: "apns").count == 32)
    }
}
