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
    ///
    /// Written field by field in the keys' bytewise order rather than through ``contentJSON`` (a dictionary built,
    /// sorted and looked up for each record): every notification is a record, and that was measurable in
    /// `relay-bench relay`. `AuditCanonicalJSONTests` checks that both give the same bytes.
    package func canonicalBytes() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(384)
        var first = true
        func key(_ name: StaticString) {
            CanonicalJSON.appendKey(name, first: first, to: &bytes)
            first = false
        }
        func put(_ name: StaticString, _ value: String?) {
            guard let value else { return }
            key(name)
            CanonicalJSON.appendString(value, to: &bytes)
        }
        func put(_ name: StaticString, _ value: Int?) {
            guard let value else { return }
            key(name)
            CanonicalJSON.appendInteger(Int64(value), to: &bytes)
        }
        func put(_ name: StaticString, _ value: JSONValue?) {
            guard let value else { return }
            key(name)
            CanonicalJSON.append(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "{"))
        // The keys in bytewise order (every one is lowercase ASCII at its start; "R" < "S" in the last two).
        put("actor", self.entry.actor)
        put("after", self.entry.after)
        put("app", self.entry.app)
        put("attempts", self.entry.attempts)
        put("before", self.entry.before)
        put("chain", chain)
        put("client", self.entry.client)
        if let critical = self.entry.critical {
            key("critical")
            bytes.append(contentsOf: (critical ? "true" : "false").utf8)
        }
        put("detail", self.entry.detail)
        put("event", self.entry.event.rawValue)
        put("keyID", self.entry.keyID)
        put("latencyMillis", self.entry.latencyMillis)
        put("outcome", self.entry.outcome)
        put("provider", self.entry.provider)
        put("requestID", self.entry.requestID)
        key("seq")
        CanonicalJSON.appendInteger(seq, to: &bytes)
        put("tenantID", self.entry.tenantID)
        key("time")
        CanonicalJSON.appendInteger(self.entry.timeMillis, to: &bytes)
        put("tokenFingerprint", self.entry.tokenFingerprint)
        put("upstreamReason", self.entry.upstreamReason)
        put("upstreamStatus", self.entry.upstreamStatus)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }
}
