import Foundation
import Testing

@testable import RelayCore

@Suite("Random UUIDs")
struct RandomUUIDTests {
    @Test("Version 4, RFC 9562 variant, lowercase, and all different")
    func shape() {
        var seen = Set<String>()
        for _ in 0..<10_000 {
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

    @Test("The lowercase text is Foundation's uuidString in lowercase")
    func lowercaseText() {
        for _ in 0..<1_000 {
            let uuid = UUID.random()
            #expect(uuid.lowercaseString == uuid.uuidString.lowercased())
        }
        let fixed = UUID(
            uuid: (0x00, 0x1F, 0xA2, 0xB3, 0xC4, 0xD5, 0xE6, 0xF7, 0x08, 0x19, 0x2A, 0x3B, 0x4C, 0x5D, 0x6E, 0xFF))
        #expect(fixed.lowercaseString == "001fa2b3-c4d5-e6f7-0819-2a3b4c5d6eff")
    }

    @Test("The text form reads back as Foundation reads it, in either case; anything else is nil")
    func textIsReadBack() {
        for _ in 0..<1_000 {
            let uuid = UUID.random()
            #expect(UUID(text: uuid.lowercaseString) == uuid)
            #expect(UUID(text: uuid.uuidString) == uuid)
        }
        let fixed = "001fa2b3-c4d5-e6f7-0819-2a3b4c5d6eff"
        #expect(UUID(text: fixed) == UUID(uuidString: fixed))
        for bad in [
            "", "001fa2b3-c4d5-e6f7-0819-2a3b4c5d6ef", "001fa2b3-c4d5-e6f7-0819-2a3b4c5d6eff0",
            "001fa2b3c4d5-e6f7-0819-2a3b4c5d6eff0", "001fa2b3-c4d5-e6f7-0819-2a3b4c5d6efg", "r-1", "ticket-001",
            "001fa2b3-c4d5-e6f7-0819-2a3b4c5d6é",
        ] {
            #expect(UUID(text: bad) == nil, "\(bad)")
            #expect(UUID(uuidString: bad) == nil, "Foundation agrees on \(bad)")
        }
    }

    @Test("Time-ordered: version 7, the time in milliseconds first, text that sorts by time")
    func timeOrdered() {
        let date = Date(timeIntervalSince1970: 1_795_000_000.5)
        let uuid = UUID.timeOrdered(at: date)
        let text = uuid.lowercaseString
        // 1,795,000,000,500 ms = 0x01a1ee565ff4
        #expect(text.hasPrefix("01a1ee56-5ff4-7"), "\(text)")
        #expect("89ab".contains(Array(text)[19]), "variant of \(text)")
        #expect(UUID(uuidString: text) == uuid)

        var previous = ""
        var seen = Set<String>()
        for step in 0..<2_000 {
            // Within one millisecond the order is random; from one to the next it follows the time (2 ms steps, clear
            // of rounding in the Double seconds).
            let id = UUID.timeOrdered(at: date.addingTimeInterval(Double(step) * 0.002)).lowercaseString
            #expect(id > previous)
            previous = id
            seen.insert(id)
            seen.insert(UUID.timeOrdered(at: date).lowercaseString)
        }
        #expect(seen.count == 4_000)
    }

    @Test("A request's receipt ids at once: each version 7 with the date's time, the variant, random bits of its own")
    func timeOrderedInABatch() {
        let date = Date(timeIntervalSince1970: 1_795_000_000.5)
        #expect(UUID.timeOrdered(count: 0, at: date).isEmpty)
        let batch = UUID.timeOrdered(count: 1_000, at: date).map(\.lowercaseString)
        #expect(batch.count == 1_000)
        #expect(Set(batch).count == 1_000)
        for text in batch {
            #expect(text.hasPrefix("01a1ee56-5ff4-7"), "\(text)")
            #expect("89ab".contains(Array(text)[19]), "variant of \(text)")
            #expect(UUID(uuidString: text)?.uuidString.lowercased() == text)
        }
        // The 74 random bits differ across the batch: no byte after the time is the same in every id.
        let bytes = UUID.timeOrdered(count: 64, at: date).map { uuid in withUnsafeBytes(of: uuid.uuid) { Array($0) } }
        for position in 7..<16 where position != 8 {
            #expect(Set(bytes.map { $0[position] }).count > 1, "byte \(position)")
        }
    }
}
