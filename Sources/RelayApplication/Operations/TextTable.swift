/// Columns aligned with spaces, for the command line's lists: a tab lines up only while every value is shorter than
/// the terminal's tab width, which ids and names are not.
package enum TextTable {
    /// The header and the rows, each column as wide as its widest cell, separated by two spaces; the last column is
    /// not padded, so lines carry no trailing spaces.
    package static func lines(_ header: [String], _ rows: [[String]]) -> [String] {
        let all = [header] + rows
        let columns = all.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in all.map { $0.count > column ? $0[column].count : 0 }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ")
        }
    }
}
