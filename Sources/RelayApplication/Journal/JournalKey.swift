import Crypto
package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The key that seals the delivery journal's entries (AES-256-GCM): `[store] journal_key_file`.
///
/// ### Overview
/// Every entry is sealed before it reaches the store, so the database, its WAL and its backups hold no device token
/// and no content in clear. A sealed entry is `version (1) ‖ key id (8) ‖ nonce (12) ‖ ciphertext ‖ tag (16)`, with
/// the receipt id as associated data: an entry cannot be moved to another receipt's row, and one sealed under another
/// key is told apart (``OpenFailure/otherKey``) from one that is damaged.
///
/// A key file holds 32 random bytes, as base64 text (what the relay writes, and `openssl rand -base64 32` prints) or
/// raw. With SQLite and no key file configured, the relay makes one beside the database (``loadOrCreate(path:)``);
/// with PostgreSQL every instance must be given the same file.
package struct JournalKey: Sendable {
    /// AES-256.
    package static let byteCount = 32
    private static let version: UInt8 = 1
    private static let idLength = 8

    private let key: SymmetricKey
    /// The first bytes of a hash of the key: which key sealed an entry, without revealing the key.
    private let id: [UInt8]

    /// A key of `bytes`.
    ///
    /// - Throws: ``JournalKeyError`` when there are not exactly ``byteCount`` bytes.
    package init(bytes: some Collection<UInt8>) throws(JournalKeyError) {
        guard bytes.count == Self.byteCount else {
            throw JournalKeyError("holds \(bytes.count) bytes, not the \(Self.byteCount) of a journal key")
        }
        self.init(checked: Array(bytes))
    }

    /// A key of ``byteCount`` bytes.
    private init(checked bytes: [UInt8]) {
        key = SymmetricKey(data: bytes)
        var hasher = SHA256()
        hasher.update(data: Array("pushrelay journal key id".utf8))
        hasher.update(data: bytes)
        id = Array(hasher.finalize().prefix(Self.idLength))
    }

    /// A fresh random key (an in-memory store's, or a test's).
    package static func random() -> JournalKey {
        JournalKey(checked: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    /// The key in a file's contents: base64 text of 32 bytes (surrounding whitespace ignored), or the 32 bytes raw.
    package init(fileContents contents: Data) throws(JournalKeyError) {
        let text = String(decoding: contents, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let decoded = Data(base64Encoded: text) {
            try self.init(bytes: decoded)
        } else if contents.count == Self.byteCount {
            try self.init(bytes: contents)
        } else {
            throw JournalKeyError(
                "is neither base64 text of \(Self.byteCount) bytes nor \(Self.byteCount) raw bytes "
                    + "(\(contents.count) bytes); make one with `openssl rand -base64 32`"
            )
        }
    }

    /// Reads the key file at `path`.
    ///
    /// - Throws: ``JournalKeyError`` naming the file when it is missing, unreadable or not a key.
    package static func load(path: String) throws(JournalKeyError) -> JournalKey {
        guard FileManager.default.fileExists(atPath: path) else { throw JournalKeyError("file \(path) does not exist") }
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw JournalKeyError("file \(path) cannot be read (check its permissions)")
        }
        do {
            return try JournalKey(fileContents: contents)
        } catch {
            throw JournalKeyError("file \(path) \(error.message)")
        }
    }

    /// Reads the key file at `path`, or makes one there first (32 random bytes as base64, mode 0600, never replacing
    /// a file): the key of a SQLite store without `journal_key_file`, kept beside the database.
    package static func loadOrCreate(path: String) throws(JournalKeyError) -> JournalKey {
        if FileManager.default.fileExists(atPath: path) { return try load(path: path) }
        let fresh = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            // Made meanwhile by another process opening the same database: read theirs.
            if errno == EEXIST { return try load(path: path) }
            throw JournalKeyError("file \(path) cannot be created: \(String(cString: strerror(errno)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: Data((fresh.base64EncodedString() + "\n").utf8))
            try handle.synchronize()
            try handle.close()
        } catch {
            throw JournalKeyError("file \(path) cannot be written: \(error)")
        }
        return JournalKey(checked: Array(fresh))
    }

    /// Seals `plaintext` for the entry of receipt `receiptID`.
    ///
    /// - Throws: Only when the system's random source fails (AES-GCM's nonce).
    package func seal(_ plaintext: [UInt8], receiptID: String) throws -> [UInt8] {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Self.associatedData(receiptID))
        return [Self.version] + id + Array(box.nonce) + Array(box.ciphertext) + Array(box.tag)
    }

    /// Opens what ``seal(_:receiptID:)`` made for `receiptID`.
    package func open(_ sealed: [UInt8], receiptID: String) throws(OpenFailure) -> [UInt8] {
        let header = 1 + Self.idLength
        let nonceLength = 12
        let tagLength = 16
        guard sealed.count >= header + nonceLength + tagLength, sealed[0] == Self.version else { throw .damaged }
        guard Array(sealed[1..<header]) == id else { throw .otherKey }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: sealed[header..<(header + nonceLength)]),
                ciphertext: sealed[(header + nonceLength)..<(sealed.count - tagLength)],
                tag: sealed[(sealed.count - tagLength)...]
            )
            return Array(try AES.GCM.open(box, using: key, authenticating: Self.associatedData(receiptID)))
        } catch {
            throw .damaged
        }
    }

    /// Why a sealed entry could not be opened.
    package enum OpenFailure: Error, Sendable, Equatable {
        /// Sealed under another journal key (another instance's, or one replaced since).
        case otherKey
        /// Not a sealed entry, changed since it was sealed, or bound to another receipt.
        case damaged
    }

    private static func associatedData(_ receiptID: String) -> [UInt8] {
        Array("pushrelay journal v1 ".utf8) + Array(receiptID.utf8)
    }

    /// The key file made beside a SQLite database at `databasePath`: `<database>.journal-key`.
    package static func defaultPath(besideDatabase databasePath: String) -> String {
        databasePath + ".journal-key"
    }
}

/// Why a journal key could not be had; the message names the file, never the key.
package struct JournalKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
