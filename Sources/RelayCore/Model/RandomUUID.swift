package import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension UUID {
    /// A random (version 4) UUID from the kernel's random source.
    ///
    /// Foundation's `UUID()` on Linux opens, reads and closes /dev/urandom for every UUID: three system calls for each
    /// receipt id, request id and APNs id, about 1 % of the relay's CPU time under load.
    ///
    /// The 16 bytes come from one `arc4random_buf` (glibc 2.36: one getrandom(2) call), not from
    /// `SystemRandomNumberGenerator`'s one call per 8 bytes: every notification takes a receipt id, and the second
    /// system call showed in `relay-bench relay`'s profile.
    package static func random() -> UUID {
        var words = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &words) { bytes in
            if let base = bytes.baseAddress { arc4random_buf(base, bytes.count) }
        }
        return withUnsafeMutableBytes(of: &words) { bytes in
            bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
            bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 9562 variant
            return UUID(uuid: bytes.load(as: uuid_t.self))
        }
    }

    /// A new random UUID in lowercase text, the form of request and tenant ids.
    package static func randomString() -> String {
        random().lowercaseString
    }

    /// A time-ordered (version 7, RFC 9562 §5.7) UUID: the Unix time in milliseconds in the first 48 bits, then 74
    /// random bits. Its text sorts by time (to the millisecond).
    ///
    /// Receipt ids are stored as the receipts' primary key: random ids land on a random page of that index each, so a
    /// commit of 100 receipts dirtied about 100 pages of it, and every one went through the WAL and the checkpoint.
    /// Time-ordered ids are appended where the last ones went. They are not secrets: a receipt is only ever shown to
    /// its own tenant.
    package static func timeOrdered(at date: Date = Date()) -> UUID {
        var uuid = random().uuid
        stamp(&uuid, with: date)
        return UUID(uuid: uuid)
    }

    /// `count` time-ordered UUIDs for one date (see ``timeOrdered(at:)``), their random bits from one `arc4random_buf`
    /// call: a request's receipt ids take one getrandom(2) call, not one per notification.
    package static func timeOrdered(count: Int, at date: Date = Date()) -> [UUID] {
        guard count > 0 else { return [] }
        var words = [(UInt64, UInt64)](repeating: (0, 0), count: count)
        words.withUnsafeMutableBytes { bytes in
            if let base = bytes.baseAddress { arc4random_buf(base, bytes.count) }
        }
        return words.map { random in
            var uuid = withUnsafeBytes(of: random) { $0.load(as: uuid_t.self) }
            withUnsafeMutableBytes(of: &uuid) { $0[8] = $0[8] & 0x3F | 0x80 }  // RFC 9562 variant
            stamp(&uuid, with: date)
            return UUID(uuid: uuid)
        }
    }

    /// Writes `date`'s Unix time in milliseconds into the first 48 bits, and version 7.
    private static func stamp(_ uuid: inout uuid_t, with date: Date) {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1000))
        withUnsafeMutableBytes(of: &uuid) { bytes in
            for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - index))) }
            bytes[6] = bytes[6] & 0x0F | 0x70  // version 7
        }
    }

    /// The UUID as `uuidString` writes it, in lowercase, written straight into the string's storage (rather than
    /// Foundation's uppercase text and a lowercased copy of it).
    package var lowercaseString: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var at = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    text[at] = AuditHex.digit(byte >> 4)
                    text[at + 1] = AuditHex.digit(byte & 0x0F)
                    at += 2
                }
                return at
            }
        }
    }

    /// Reads the 36-character text form (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, either case) without Foundation's
    /// `UUID(uuidString:)`, which goes through `sscanf`: the relay turns each APNs receipt id back into its `apns-id`.
    /// `nil` for anything else.
    package init?(text: String) {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return nil }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &uuid) { bytes -> Bool in
            var digits = 0
            for (position, byte) in utf8.enumerated() {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard byte == UInt8(ascii: "-") else { return false }
                    continue
                }
                guard let nibble = AuditHex.value(of: byte) else { return false }
                bytes[digits / 2] |= digits % 2 == 0 ? nibble << 4 : nibble
                digits += 1
            }
            return true
        }
        guard parsed else { return nil }
        self.init(uuid: uuid)
    }
}
