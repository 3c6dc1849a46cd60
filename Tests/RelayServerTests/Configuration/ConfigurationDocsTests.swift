import Foundation
import Testing

@testable import RelayApplication

/// Docs/configuration.md documents exactly the keys the relay reads, each with its environment variable.
struct ConfigurationDocsTests {
    /// `section.key` and the variable of every row of the key tables, from `## \`[section]\`` to the next heading.
    static func documentedKeys() throws -> [(path: String, variable: String)] {
        let docs = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("Docs/configuration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        var section: String?
        var rows: [(String, String)] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                // "## `[server]`" opens a section; any other heading closes it.
                section = line.hasPrefix("## `[") ? String(line.dropFirst(5).prefix { $0 != "]" }) : nil
                continue
            }
            guard let section, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let key = cells.first?.trimmingCharacters(in: CharacterSet(charactersIn: "`")),
                let variable = cells.last?.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            else { continue }
            rows.append(("\(section).\(key)", variable))
        }
        return rows
    }

    @Test func theDocsTablesListExactlyTheKeysTheRelayReads() throws {
        let documented = try Self.documentedKeys()
        #expect(documented.map(\.path) == ConfigurationKey.all.map(\.path), "same keys, in the same order")
        for (path, variable) in documented {
            #expect(
                ConfigurationKey.byPath[path]?.environmentName == variable, "\(path) is documented with \(variable)")
        }
    }
}
