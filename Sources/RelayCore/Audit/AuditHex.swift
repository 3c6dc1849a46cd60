/// Lowercase hexadecimal, the spelling of links, signatures and key ids in every audit text format, and of the
/// relay's other hex texts (token fingerprints, key ids, UUIDs).
package enum AuditHex {
    package static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { encode($0) }
    }

    /// Written straight into the string's storage: token fingerprints are encoded for every notification.
    package static func encode(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            for (index, byte) in bytes.enumerated() {
                text[2 * index] = digit(byte >> 4)
                text[2 * index + 1] = digit(byte & 0x0F)
            }
            return bytes.count * 2
        }
    }

    /// The lowercase digit of a value below 16.
    package static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The bytes spelt by `text`; `nil` unless it is an even number of hex digits. Uppercase is accepted, since it
    /// names the same bytes; what is hashed or signed is always re-encoded in lowercase.
    package static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let high = value(of: characters[index]), let low = value(of: characters[index + 1]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// Whether `character` is a hexadecimal digit, in either case.
    package static func isDigit(_ character: UInt8) -> Bool { value(of: character) != nil }

    /// The value of one hex digit, either case; `nil` for any other byte.
    package static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
