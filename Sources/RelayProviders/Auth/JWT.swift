import Foundation
import RelayCore

/// JSON Web Token assembly (RFC 7519): `b64url(header).b64url(claims).b64url(signature)`, unpadded. The signature
/// itself always comes from swift-crypto; this only frames it.
enum JWT {
    /// Signs `header` and `claims` with `sign`, which gets the signing input's bytes. Both are written as compact
    /// JSON with sorted keys (``JSONValue/encodedBytes()``), so a token's bytes depend only on its contents.
    static func make(
        header: [String: JSONValue],
        claims: [String: JSONValue],
        sign: (Data) throws -> Data
    ) throws -> String {
        let headerPart = base64URL(Data(JSONValue.object(header).encodedBytes()))
        let claimsPart = base64URL(Data(JSONValue.object(claims).encodedBytes()))
        let input = "\(headerPart).\(claimsPart)"
        let signature = try sign(Data(input.utf8))
        return "\(input).\(base64URL(signature))"
    }

    /// Base64url without padding (RFC 7515 §2).
    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url without padding; `nil` when malformed.
    static func decodeBase64URL(_ text: some StringProtocol) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
