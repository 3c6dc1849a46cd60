internal import Foundation

/// A JWS in compact serialisation (`header.claims.signature`), split and decoded but not verified.
///
/// Both APNs provider tokens (ES256) and Google's OAuth assertions (RS256) arrive this way; each endpoint checks the
/// algorithm, the claims and the signature itself.
struct CompactJWT: Sendable {
    /// The decoded JOSE header (must be a JSON object).
    let header: SimulatorJSON
    /// The decoded claims set (must be a JSON object).
    let claims: SimulatorJSON
    /// The decoded signature bytes.
    let signature: [UInt8]
    /// `base64url(header).base64url(claims)`: what was signed, as it appeared on the wire.
    let signingInput: [UInt8]

    /// Splits and decodes `text`, or returns `nil` unless it has three base64url parts whose first two are JSON
    /// objects.
    init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]),
            let claimsBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = SimulatorJSON(parsing: headerBytes), header.objectValue != nil,
            let claims = SimulatorJSON(parsing: claimsBytes), claims.objectValue != nil
        else {
            return nil
        }
        self.header = header
        self.claims = claims
        self.signature = signature
        self.signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
    }
}

/// Base64url without padding (RFC 7515 §2), the encoding of every JWT part.
package enum Base64URL {
    /// Encodes `bytes` as base64url without `=` padding.
    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes unpadded base64url; returns `nil` for padding, standard-alphabet characters or other bad input, as a
    /// strict JWT verifier does.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard text.utf8.allSatisfy({ Self.alphabet.contains($0) }), text.utf8.count % 4 != 1 else {
            return nil
        }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }

    private static let alphabet = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8
    )
}
