package import RelayCore

/// How stores keep `before` and `after`: canonical JSON text.
package enum AuditJSONText {
    package static func encode(_ value: JSONValue) -> String { CanonicalJSON.string(value) }

    package static func decode(_ text: String) throws -> JSONValue {
        try JSONValue.parse(Array(text.utf8))
    }

    /// `value` after one trip through storage; unreadable text (never produced by ``encode(_:)``) keeps the value.
    static func roundTrip(_ value: JSONValue) -> JSONValue {
        (try? decode(encode(value))) ?? value
    }
}

extension AuditEntry {
    /// The entry as it will read back from a store: `before` and `after` pass through their stored text once.
    ///
    /// Stores keep those values as canonical JSON text, and a number such as `10.0` may read back as the integer
    /// `10`, which hashes differently. Chaining the normalised entry makes the link computed at write time the one a
    /// verifier computes from the stored record.
    package func normalisedForStorage() -> AuditEntry {
        var entry = self
        entry.before = before.map(AuditJSONText.roundTrip)
        entry.after = after.map(AuditJSONText.roundTrip)
        return entry
    }
}
