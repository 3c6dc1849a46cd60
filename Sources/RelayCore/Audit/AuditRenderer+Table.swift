extension AuditRenderer {
    /// A column of the table: its title, its width in characters and how to fill it.
    struct TableColumn: Sendable {
        var title: String
        var width: Int
        var alignRight = false
        /// The record, and tenant names by id.
        var value: @Sendable (AuditRecord, [String: String]) -> String?
    }

    /// The table's columns, in order: time, event, tenant (its name where known, else its id), provider, token
    /// fingerprint, critical, outcome, upstream status, latency, actor.
    static let tableColumns: [TableColumn] = [
        TableColumn(title: "TIME", width: 24) { record, _ in AuditTime.iso8601(millis: record.timeMillis) },
        TableColumn(title: "EVENT", width: 9) { record, _ in record.event.rawValue },
        TableColumn(title: "TENANT", width: 20) { record, names in record.tenantID.map { names[$0] ?? $0 } },
        TableColumn(title: "PROVIDER", width: 8) { record, _ in record.provider },
        TableColumn(title: "TOKEN", width: 16) { record, _ in record.tokenFingerprint },
        TableColumn(title: "CRITICAL", width: 8) { record, _ in record.critical.map { $0 ? "yes" : "no" } },
        TableColumn(title: "OUTCOME", width: 24) { record, _ in record.outcome },
        TableColumn(title: "STATUS", width: 6, alignRight: true) { record, _ in record.upstreamStatus.map(String.init)
        },
        TableColumn(title: "LATENCY", width: 9, alignRight: true) { record, _ in
            record.latencyMillis.map { "\($0) ms" }
        },
        TableColumn(title: "ACTOR", width: 24) { record, _ in record.actor },
    ]

    static let columnSeparator = "  "

    func tableLine(_ record: AuditRecord) -> String {
        Self.tableRow(Self.tableColumns.map { $0.value(record, tenantNames) ?? "" })
    }

    /// Pads or cuts each cell to its column and trims the line's trailing spaces.
    static func tableRow(_ cells: [String]) -> String {
        let padded = zip(tableColumns, cells).map { column, cell in
            fit(cell, width: column.width, alignRight: column.alignRight)
        }
        var line = padded.joined(separator: columnSeparator)
        while line.last == " " { line.removeLast() }
        return line
    }

    /// `text` made exactly `width` characters: control characters replaced, cut with "…" or padded with spaces.
    static func fit(_ text: String, width: Int, alignRight: Bool) -> String {
        var cell = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.properties.generalCategory == .control ? "\u{FFFD}" : $0 }))
        if cell.count > width {
            cell = String(cell.prefix(width - 1)) + "…"
        }
        let padding = String(repeating: " ", count: width - cell.count)
        return alignRight ? padding + cell : cell + padding
    }
}
