import RelayCore
package import RelayApplication

/// The optional bodies of `POST …/keys` (`expiresInDays`) and `POST …/keys/{keyID}/rotate` (`overlapDays`).
enum KeyRequest {
    static let maxExpiresInDays = 3650
    static let maxOverlapDays = 365

    /// `{"expiresInDays": 1…3650}` or an empty body: the days until a new key expires, `nil` for never.
    static func expiresInDays(_ json: JSONValue?) throws(RelayHTTPError) -> Int? {
        try days(json, field: "expiresInDays", range: 1...maxExpiresInDays)
    }

    /// `{"overlapDays": 0…365}` or an empty body: how long a rotated key keeps working (default 7 days).
    static func overlapDays(_ json: JSONValue?) throws(RelayHTTPError) -> Int? {
        try days(json, field: "overlapDays", range: 0...maxOverlapDays)
    }

    private static func days(_ json: JSONValue?, field: String, range: ClosedRange<Int>) throws(RelayHTTPError) -> Int?
    {
        guard let json else { return nil }
        guard case .object(let object) = json else {
            throw AdminError.invalid("", "the request body must be a JSON object (or empty)")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != field }) {
            var message = "unknown field '\(unknown)'"
            if let suggestion = NameSuggestion.closest(to: unknown, among: [field], maxDistance: 3) {
                message += "; did you mean '\(suggestion)'?"
            }
            throw AdminError.invalid(JSONPath(unknown).description, message)
        }
        switch object[field] {
        case nil, .null?: return nil
        case let value?:
            guard let days = value.integerValue, let whole = Int(exactly: days), range.contains(whole) else {
                throw AdminError.invalid(field, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
            }
            return whole
        }
    }
}
