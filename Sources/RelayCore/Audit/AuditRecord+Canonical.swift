extension AuditRecord {
    /// The JSON field names of a record, shared by the canonical bytes, `Codable` and the export format.
    static let contentFields: Set<String> = [
        "chain", "seq", "time", "event", "tenantID", "keyID", "requestID", "client", "provider", "tokenFingerprint",
        "critical", "outcome", "upstreamStatus", "upstreamReason", "attempts", "latencyMillis", "actor", "before",
        "after", "detail",
    ]

    /// The record without its link, as a JSON object with absent fields left out and the time in milliseconds.
    var contentJSON: [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "chain": .string(chain), "seq": .int(seq), "time": .int(timeMillis), "event": .string(event.rawValue),
        ]
        func put(_ key: String, _ value: String?) { if let value { fields[key] = .string(value) } }
        func put(_ key: String, _ value: Int?) { if let value { fields[key] = .int(Int64(value)) } }
        put("tenantID", tenantID)
        put("keyID", keyID)
        put("requestID", requestID)
        put("client", client)
        put("provider", provider)
        put("tokenFingerprint", tokenFingerprint)
        if let critical { fields["critical"] = .bool(critical) }
        put("outcome", outcome)
        put("upstreamStatus", upstreamStatus)
        put("upstreamReason", upstreamReason)
        put("attempts", attempts)
        put("latencyMillis", latencyMillis)
        put("actor", actor)
        if let before { fields["before"] = before }
        if let after { fields["after"] = after }
        put("detail", detail)
        return fields
    }

    /// The bytes a record's link hashes: the record without `link` as canonical JSON (``CanonicalJSON``).
    ///
    /// Keys are the field names (`chain`, `seq`, `event`, `tenantID`, …) except that the time is `time`, in
    /// milliseconds; absent fields are left out, so adding an optional field to the format later does not change
    /// the bytes of records that lack it. `chain` and `seq` are included, so a record cannot be moved to another
    /// place or chain with its link intact.
    package func canonicalBytes() -> [UInt8] {
        CanonicalJSON.encode(.object(contentJSON))
    }
}
