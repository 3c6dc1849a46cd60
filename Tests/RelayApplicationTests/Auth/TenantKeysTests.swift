import RelayCore
import Testing

@testable import RelayApplication

/// Keys are split and hashed on their UTF-8 bytes: what is accepted, what is not, and that the stored hash is the
/// SHA-256 of the secret's bytes.
@Suite struct TenantKeysTests {
    @Test func anIssuedKeySplitsIntoItsIdAndSecretAndMatchesItsHash() throws {
        let issued = TenantKeys.issue()
        let parsed = try #require(TenantKeys.parse(issued.key))
        #expect(parsed.id == issued.id)
        #expect(issued.key == "prk_\(parsed.id)_\(parsed.secret)")
        #expect(TenantKeys.matches(secret: parsed.secret, hash: issued.secretHash))
        #expect(!TenantKeys.matches(secret: String(parsed.secret.dropLast()) + "x", hash: issued.secretHash))
    }

    @Test func eachPrefixTakesOnlyItsOwnKeys() throws {
        let tenant = TenantKeys.issue()
        let token = OperatorTokens.issue()
        #expect(OperatorTokens.parse(tenant.key) == nil)
        #expect(TenantKeys.parse(token.key) == nil)
        #expect(try #require(OperatorTokens.parse(token.key)).id == token.id)
    }

    @Test(arguments: [
        ("prk_0123456789abcdef_" + String(repeating: "A", count: 43), true),
        ("prk_0123456789ABCDEF_" + String(repeating: "_", count: 64), true),
        ("prk_0123456789abcdef_" + String(repeating: "A", count: 42), false),
        ("prk_0123456789abcdef_" + String(repeating: "A", count: 65), false),
        ("prk_0123456789abcde_" + String(repeating: "A", count: 43), false),
        ("prk_0123456789abcdef0_" + String(repeating: "A", count: 43), false),
        ("prk_0123456789abcdeg_" + String(repeating: "A", count: 43), false),
        ("prk_0123456789abcdé_" + String(repeating: "A", count: 43), false),
        ("prk_0123456789abcdef" + String(repeating: "A", count: 43), false),
        ("PRK_0123456789abcdef_" + String(repeating: "A", count: 43), false),
        ("prk_", false),
        ("", false),
    ])
    func theShapeOfAKey(_ presented: String, _ accepted: Bool) {
        #expect((TenantKeys.parse(presented) != nil) == accepted)
    }

    @Test func theSecretsHashIsSHA256OfItsBytes() {
        // FIPS 180-2's example: SHA-256("abc").
        #expect(
            AuditHex.encode(TenantKeys.hash(secret: "abc"))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
