import Foundation
import Testing

@testable import RelayCore

@Suite("Random UUIDs")
struct RandomUUIDTests {
    @Test("Version 4, RFC 9562 variant, lowercase, and all different")
    func shape() {
        var seen = Set<String>()
        for _ in 0 ..< 10_000 {
            let text = UUID.randomString()
            let characters = Array(text)
            #expect(text.count == 36)
            #expect(text == text.lowercased())
            #expect(characters[14] == "4", "version nibble of \(text)")
            #expect("89ab".contains(characters[19]), "variant of \(text)")
            #expect(UUID(uuidString: text) != nil)
            seen.insert(text)
        }
        #expect(seen.count == 10_000)
    }
}
