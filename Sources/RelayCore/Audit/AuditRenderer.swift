/// Renders audit records for people to review: one line per record, plus a column header for CSV and tables.
///
/// ### Overview
/// Rendering is for reading, not for proving: none of these formats can be verified (use the export format,
/// ``AuditExportLine``, for that). Every format writes times as ISO 8601 in UTC with milliseconds
/// (`2027-01-15T08:00:00.000Z`) and links as lowercase hex.
///
/// - **jsonl**: the record as one JSON object with sorted keys and the field names of the export format; unlike the
///   export, `time` is the ISO 8601 string instead of milliseconds.
/// - **csv**: RFC 4180 (a field holding a comma, quote, CR or LF is quoted, quotes doubled) in the fixed column order
///   of ``csvColumns``; absent values are empty; `before` and `after` are compact JSON in the last two columns.
///   Values are written as recorded, not altered to defuse spreadsheet formulas: this is an audit trail.
/// - **table**: fixed-width columns of a useful subset (``tableColumns``); longer values are cut with "…", control
///   characters are shown as "�" so a value cannot break the layout or drive the terminal; `before`/`after` never
///   appear.
///
/// Lines carry no line break; the caller adds one (`\n`; CSV readers accept it as well as RFC 4180's CRLF).
package struct AuditRenderer: Sendable {
    package var format: AuditFormat
    /// Tenant names by id, for the table's TENANT column (records hold ids, which stay when a tenant is renamed).
    package var tenantNames: [String: String]

    package init(format: AuditFormat, tenantNames: [String: String] = [:]) {
        self.format = format
        self.tenantNames = tenantNames
    }

    /// The column header line, or `nil` for JSON Lines, which has none.
    package var headerLine: String? {
        switch format {
        case .jsonl: nil
        case .csv: Self.csvColumns.joined(separator: ",")
        case .table: Self.tableRow(Self.tableColumns.map(\.title))
        }
    }

    /// One record as one line.
    package func line(for record: AuditRecord) -> String {
        switch format {
        case .jsonl: Self.jsonLine(record)
        case .csv: Self.csvLine(record)
        case .table: tableLine(record)
        }
    }

    // MARK: - JSON Lines

    static func jsonLine(_ record: AuditRecord) -> String {
        var fields = record.contentJSON
        fields["time"] = .string(AuditTime.iso8601(millis: record.timeMillis))
        fields["link"] = .string(AuditHex.encode(record.link))
        return CanonicalJSON.string(.object(fields))
    }

    // MARK: - CSV

    /// The CSV columns, in order.
    package static let csvColumns = [
        "time", "chain", "seq", "event", "tenant", "key", "request", "client", "provider", "token", "critical",
        "outcome", "upstream_status", "upstream_reason", "attempts", "latency_ms", "actor", "detail", "before",
        "after",
    ]

    static func csvLine(_ record: AuditRecord) -> String {
        let values: [String?] = [
            AuditTime.iso8601(millis: record.timeMillis), record.chain, String(record.seq), record.event.rawValue,
            record.tenantID, record.keyID, record.requestID, record.client, record.provider, record.tokenFingerprint,
            record.critical.map { $0 ? "true" : "false" }, record.outcome, record.upstreamStatus.map(String.init),
            record.upstreamReason, record.attempts.map(String.init), record.latencyMillis.map(String.init),
            record.actor, record.detail, record.before.map(CanonicalJSON.string),
            record.after.map(CanonicalJSON.string),
        ]
        return values.map { csvField($0 ?? "") }.joined(separator: ",")
    }

    static func csvField(_ value: String) -> String {
        let needsQuotes = value.utf8.contains { byte in
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == 0x0A || byte == 0x0D
        }
        guard needsQuotes else { return value }
        var quoted = "\""
        for character in value {
            quoted.append(character == "\"" ? "\"\"" : String(character))
        }
        return quoted + "\""
    }
}
