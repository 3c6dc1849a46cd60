import Crypto

/// The writer's side of a hash chain: turns entries into linked, numbered records.
///
/// ### Overview
/// One `AuditChain` per writing instance. Its whole state is the last record's `seq` and `link`; `append` gives the
/// next entry `seq = lastSeq + 1` and `link = SHA-256(lastLink ‖ canonicalBytes(record))`. It performs no I/O: the
/// store appends under its own lock (or transaction) and persists the records in order, and on start-up resumes the
/// chain from the last stored record with ``init(chain:head:)``.
package struct AuditChain: Sendable, Equatable {
    /// The link before the first record of every chain: 32 zero bytes.
    package static let genesisLink = [UInt8](repeating: 0, count: linkLength)
    /// Links are SHA-256 digests.
    package static let linkLength = 32

    package let chain: String
    package private(set) var lastSeq: Int64
    package private(set) var lastLink: [UInt8]

    /// A chain resuming after `head` (its last record's seq and link), or a new chain when `head` is `nil`.
    ///
    /// `head.chain` is not consulted: the caller names the chain it writes, and the head it read back for it.
    package init(chain: String, head: AuditAnchor?) {
        self.chain = chain
        self.lastSeq = head?.seq ?? 0
        self.lastLink = head?.link ?? Self.genesisLink
    }

    /// The chain's last record as an anchor: what a checkpoint signs, and what a later chain resumes from.
    package var head: AuditAnchor {
        AuditAnchor(chain: chain, seq: lastSeq, link: lastLink)
    }

    /// Places `entry` after the last record and returns the linked record.
    package mutating func append(_ entry: AuditEntry) -> AuditRecord {
        var record = AuditRecord(chain: chain, seq: lastSeq + 1, entry: entry, link: [])
        record.link = Self.link(after: lastLink, canonicalBytes: record.canonicalBytes())
        lastSeq = record.seq
        lastLink = record.link
        return record
    }

    /// `SHA-256(previous ‖ canonicalBytes)`: the link of a record whose predecessor's link is `previous`.
    package static func link(after previous: [UInt8], canonicalBytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data: previous)
        hasher.update(data: canonicalBytes)
        return Array(hasher.finalize())
    }
}
