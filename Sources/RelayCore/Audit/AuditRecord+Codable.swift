/// A record's JSON form is its canonical content plus `link` in lowercase hex, the same object an export file holds;
/// `time` is in milliseconds. Decoding is strict (see ``AuditJSONReader``).
extension AuditRecord: Codable, AuditJSONCoded {
    package init(from decoder: any Decoder) throws { try self.init(jsonFrom: decoder) }

    package func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }

    /// The record as a JSON object: ``contentJSON`` plus `link` in hex.
    var json: JSONValue {
        var fields = contentJSON
        fields["link"] = .string(AuditHex.encode(link))
        return .object(fields)
    }

    init(json: JSONValue, path: String) throws(AuditFieldError) {
        let reader = try AuditJSONReader(json, path: path, fields: Self.contentFields.union(["link"]))
        // Read in the order of the record's identity first, so the first error named is the most useful one.
        let chain = try reader.string("chain")
        let seq = try reader.int64("seq")
        let timeMillis = try reader.int64("time")
        let eventName = try reader.string("event")
        guard let event = AuditEvent(rawValue: eventName) else {
            let known = AuditEvent.allCases.map(\.rawValue).joined(separator: ", ")
            throw AuditFieldError(field: reader.name("event"), reason: "unknown event \"\(eventName)\" (\(known))")
        }
        let entry = AuditEntry(
            timeMillis: timeMillis,
            event: event,
            tenantID: try reader.optionalString("tenantID"),
            keyID: try reader.optionalString("keyID"),
            requestID: try reader.optionalString("requestID"),
            client: try reader.optionalString("client"),
            provider: try reader.optionalString("provider"),
            tokenFingerprint: try reader.optionalString("tokenFingerprint"),
            critical: try reader.optionalBool("critical"),
            outcome: try reader.optionalString("outcome"),
            upstreamStatus: try reader.optionalInt("upstreamStatus"),
            upstreamReason: try reader.optionalString("upstreamReason"),
            attempts: try reader.optionalInt("attempts"),
            latencyMillis: try reader.optionalInt("latencyMillis"),
            actor: try reader.optionalString("actor"),
            before: reader.optionalJSON("before"),
            after: reader.optionalJSON("after"),
            detail: try reader.optionalString("detail"),
            app: try reader.optionalString("app")
        )
        self.init(
            chain: chain,
            seq: seq,
            entry: entry,
            link: try reader.hexBytes("link", count: AuditChain.linkLength)
        )
    }
}
