import RelayApplication
import RelayCore

/// The optional bodies of `POST …/keys` (`expiresInDays`) and `POST …/keys/{keyID}/rotate` (`overlapDays`); their
/// bounds are ``TenantRules``'.
enum KeyRequest {
    /// `{"expiresInDays": 1…3650}` or an empty body: the days until a new key expires, `nil` for never.
    static func expiresInDays(_ json: JSONValue?) throws(RelayHTTPError) -> Int? {
        try days(json, field: .expiresInDays, range: TenantRules.expiresInDays)
    }

    /// `{"overlapDays": 0…365}` or an empty body: how long a rotated key keeps working (default 7 days).
    static func overlapDays(_ json: JSONValue?) throws(RelayHTTPError) -> Int? {
        try days(json, field: .overlapDays, range: TenantRules.overlapDays)
    }

    private static func days(_ json: JSONValue?, field: TenantRules.Field, range: ClosedRange<Int>)
        throws(RelayHTTPError) -> Int?
    {
        let field = field.rawValue
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
            guard let days = value.integerValue else {
                throw AdminError.invalid(field, TenantRules.notAnInteger(in: range))
            }
            if let problem = TenantRules.problem(days, in: range) { throw AdminError.invalid(field, problem) }
            return Int(days)
        }
    }
}
