import Foundation
import Testing

@testable import RelayApplication

/// The journal key: sealing, opening, and its file.
@Suite struct JournalKeyTests {
    @Test func whatIsSealedOpensOnlyWithTheSameKeyForTheSameReceipt() throws {
        let key = JournalKey.random()
        let plaintext = Array("token and content".utf8)
        let sealed = try key.seal(plaintext, receiptID: "receipt-1")
        #expect(try key.open(sealed, receiptID: "receipt-1") == plaintext)
        #expect(!sealed.windowsContain(plaintext), "the plaintext is not in the sealed bytes")
        // Another receipt's row, another key, a changed byte, a truncated entry.
        #expect(throws: JournalKey.OpenFailure.damaged) { try key.open(sealed, receiptID: "receipt-2") }
        #expect(throws: JournalKey.OpenFailure.otherKey) {
            try JournalKey.random().open(sealed, receiptID: "receipt-1")
        }
        var changed = sealed
        changed[changed.count - 20] ^= 1
        #expect(throws: JournalKey.OpenFailure.damaged) { try key.open(changed, receiptID: "receipt-1") }
        #expect(throws: JournalKey.OpenFailure.damaged) {
            try key.open(Array(sealed.prefix(20)), receiptID: "receipt-1")
        }
        // Sealing twice never gives the same bytes (a fresh nonce each time).
        #expect(try key.seal(plaintext, receiptID: "receipt-1") != sealed)
    }

    @Test func aKeyFileIsMadeOnceWithModeSixHundredAndReadAfterwards() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = JournalKey.defaultPath(besideDatabase: folder.appendingPathComponent("relay.db").path)
        #expect(path.hasSuffix("/relay.db.journal-key"))

        let made = try JournalKey.loadOrCreate(path: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines))?.count == 32)

        // The same key again: what one sealed, the other opens.
        let again = try JournalKey.loadOrCreate(path: path)
        #expect(try again.open(try made.seal([1, 2, 3], receiptID: "r"), receiptID: "r") == [1, 2, 3])
        #expect(try JournalKey.load(path: path).open(try made.seal([4], receiptID: "r"), receiptID: "r") == [4])
    }

    @Test func aMissingOrWrongKeyFileIsAnErrorNamingTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("missing.key").path
        #expect(throws: JournalKeyError("file \(missing) does not exist")) { try JournalKey.load(path: missing) }
        let short = folder.appendingPathComponent("short.key").path
        try Data(repeating: 7, count: 31).write(to: URL(fileURLWithPath: short))
        let error = #expect(throws: JournalKeyError.self) { try JournalKey.load(path: short) }
        #expect(error?.message.hasPrefix("file \(short) is neither base64 text of 32 bytes nor 32 raw bytes") == true)
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs anywhere in these bytes.
    func windowsContain(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
