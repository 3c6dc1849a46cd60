extension AuditRecord {
    /// The JSON field names of a record, shared by the canonical bytes, `Codable` and the export format.
    static let contentFields: Set<String> = [
        "chain", "seq", "time", "event", "tenantID", "keyID", "requestID", "client", "provider", "tokenFingerprint",
        "critical", "outcome", "upstreamStatus", "upstreamReason", "attempts", "latencyMillis", "actor", "before",
        "after", "detail", "app",
    ]

    /// The record without its link, as a JSON object with absent fields left out and the time in milliseconds.
    var contentJSON: [String: JSONValue] {
        let entry = self.entry
        var fields: [String: JSONValue] = [
            "chain": .string(chain), "seq": .int(seq), "time": .int(entry.timeMillis),
            "event": .string(entry.event.rawValue),
        ]
        func put(_ key: String, _ value: String?) { if let value { fields[key] = .string(value) } }
        func put(_ key: String, _ value: Int?) { if let value { fields[key] = .int(Int64(value)) } }
        put("tenantID", entry.tenantID)
        put("keyID", entry.keyID)
        put("requestID", entry.requestID)
        put("client", entry.client)
        put("provider", entry.provider)
        put("tokenFingerprint", entry.tokenFingerprint)
        if let critical = entry.critical { fields["critical"] = .bool(critical) }
        put("outcome", entry.outcome)
        put("upstreamStatus", entry.upstreamStatus)
        put("upstreamReason", entry.upstreamReason)
        put("attempts", entry.attempts)
        put("latencyMillis", entry.latencyMillis)
        put("actor", entry.actor)
        if let before = entry.before { fields["before"] = before }
        if let after = entry.after { fields["after"] = after }
        put("detail", entry.detail)
        put("app", entry.app)
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
