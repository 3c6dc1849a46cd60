extension AuditRenderer {
    /// A column of the table: its title, its width in characters and how to fill it.
    struct TableColumn: Sendable {
        var title: String
        var width: Int
        var alignRight = false
        var value: @Sendable (AuditRecord) -> String?
    }

    /// The table's columns, in order: time, event, tenant, provider, token fingerprint, critical, outcome, upstream
    /// status, latency.
    static let tableColumns: [TableColumn] = [
        TableColumn(title: "TIME", width: 24) { AuditTime.iso8601(millis: $0.timeMillis) },
        TableColumn(title: "EVENT", width: 9) { $0.event.rawValue },
        TableColumn(title: "TENANT", width: 16) { $0.tenantID },
        TableColumn(title: "PROVIDER", width: 8) { $0.provider },
        TableColumn(title: "TOKEN", width: 16) { $0.tokenFingerprint },
        TableColumn(title: "CRITICAL", width: 8) { $0.critical.map { $0 ? "yes" : "no" } },
        TableColumn(title: "OUTCOME", width: 24) { $0.outcome },
        TableColumn(title: "STATUS", width: 6, alignRight: true) { $0.upstreamStatus.map(String.init) },
        TableColumn(title: "LATENCY", width: 9, alignRight: true) { $0.latencyMillis.map { "\($0) ms" } },
    ]

    static let columnSeparator = "  "

    static func tableLine(_ record: AuditRecord) -> String {
        tableRow(tableColumns.map { $0.value(record) ?? "" })
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
