import Foundation
import Testing

@testable import RelayServer

/// The relay's JSON error codes are spelt once (``RelayHTTPError/Code``), and Docs/api.md lists each.
@Suite struct ErrorCodeTests {
    @Test func everyErrorCodeIsInApiMd() throws {
        let api = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("Docs/api.md"),
            encoding: .utf8)
        for code in RelayHTTPError.Code.allCases {
            #expect(api.contains("| `\(code.rawValue)`"), "\(code.rawValue) in api.md's error table")
        }
    }
}
