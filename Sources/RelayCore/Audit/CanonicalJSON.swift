/// The canonical JSON text of a ``JSONValue``: the bytes the audit log hashes and signs.
///
/// ### Overview
/// A hash chain is only as stable as the bytes it hashes. `JSONEncoder`'s output (spacing, key order, escaping,
/// number formatting) is not a documented contract and has changed between Foundation implementations, so the audit
/// log hashes the output of this small encoder instead, whose every rule is fixed here:
///
/// - no whitespace anywhere;
/// - object keys sorted **bytewise** by their UTF-8 encoding (not by `String`'s Unicode-aware `<`);
/// - strings escape only `"` and `\`, plus control characters below U+0020: `\b \f \n \r \t` in their short forms,
///   the others as `\u00XX` with lowercase hex; everything else, non-ASCII included, is written as raw UTF-8;
/// - integers in decimal; booleans and `null` as literals;
/// - a fractional number in Swift's shortest round-trip form (`"\(double)"`, e.g. `0.1`, `1e-07`, `1e+300`), and an
///   integral one that fits `Int64` as that integer, because ``JSONValue`` treats `1` and `1.0` as equal and a JSON
///   decoder may turn `1.0` into an integer: the canonical form must survive a round trip through any JSON parser;
///   a non-finite number (which JSON cannot express) becomes `null`.
///
/// Callers leave absent fields out of the object themselves; this encoder writes what it is given.
package enum CanonicalJSON {
    /// The canonical bytes of `value`.
    package static func encode(_ value: JSONValue) -> [UInt8] {
        var bytes: [UInt8] = []
        append(value, to: &bytes)
        return bytes
    }

    /// The canonical text of `value`.
    package static func string(_ value: JSONValue) -> String {
        String(decoding: encode(value), as: UTF8.self)
    }

    static func append(_ value: JSONValue, to bytes: inout [UInt8]) {
        switch value {
        case .null:
            bytes.append(contentsOf: "null".utf8)
        case .bool(let flag):
            bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number):
            appendInteger(number, to: &bytes)
        case .double(let number):
            appendNumber(number, to: &bytes)
        case .string(let text):
            appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                append(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            // The members themselves sorted, not their keys: no look-up of each key afterwards.
            let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (index, member) in sorted.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                appendString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                append(member.value, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// `"key":` for a key that needs no escaping (the audit record's field names), then the separator before the next.
    package static func appendKey(_ key: StaticString, first: Bool, to bytes: inout [UInt8]) {
        if !first { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    package static func appendInteger(_ number: Int64, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: String(number).utf8)
    }

    private static func appendNumber(_ number: Double, to bytes: inout [UInt8]) {
        if !number.isFinite {
            bytes.append(contentsOf: "null".utf8)
        } else if let integer = Int64(exactly: number) {
            // Also turns -0.0 into 0, which every parser reads back as the same value.
            appendInteger(integer, to: &bytes)
        } else {
            bytes.append(contentsOf: "\(number)".utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Escapes byte by byte: every byte that needs escaping is ASCII, and the bytes of a multi-byte UTF-8 sequence
    /// are all ≥ 0x80, so they pass through untouched. A string with nothing to escape (almost every one: ids, names,
    /// outcomes) is copied whole.
    package static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        let copied = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else {
                return false
            }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
            case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0x00..<0x20:
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
