import Foundation

/// One line of the tamper-evident audit log: an ``AuditEntry`` placed in a chain and linked to its predecessor.
///
/// ### Overview
/// Every running instance writes its own chain (`chain` is the instance's chain id); records of a chain are numbered
/// from 1 without gaps (`seq`), and each carries `link = SHA-256(previous link ‖ canonical bytes)`, where the first
/// record's previous link is ``AuditChain/genesisLink`` (32 zero bytes). Changing, removing or reordering a record
/// therefore breaks the links from that point on, which ``AuditVerifier`` detects; signed ``AuditCheckpoint``s pin
/// the link at a given `seq`, so that rewriting the whole tail is detected too.
///
/// The canonical bytes (``canonicalBytes()``) are the record without `link`, as canonical JSON; see
/// `AuditRecord+Canonical.swift`.
///
/// A record is its ``entry`` plus its place and link; the entry's fields read and write through the record
/// (`record.outcome`), so the two never hold the same field twice.
@dynamicMemberLookup
package struct AuditRecord: Sendable, Equatable {
    /// The id of the chain (the writing instance).
    package var chain: String
    /// 1-based, consecutive within the chain.
    package var seq: Int64
    /// The record's content, without its place in the chain.
    package var entry: AuditEntry
    /// SHA-256 of the previous record's link followed by this record's canonical bytes: 32 bytes.
    package var link: [UInt8]

    /// A record from its place in a chain, its content and its link, e.g. when read back from a store. Records are
    /// made by ``AuditChain/append(_:)``, which computes the link.
    package init(chain: String, seq: Int64, entry: AuditEntry, link: [UInt8]) {
        self.chain = chain
        self.seq = seq
        self.entry = entry
        self.link = link
    }

    /// The entry's fields (`timeMillis`, `time`, `event`, `tenantID`, …, `detail`).
    ///
    /// Inlinable, so that a caller in another module reads the field directly: called through, each access applies
    /// the key path at run time and copies the whole entry.
    @inlinable
    package subscript<Value>(dynamicMember field: WritableKeyPath<AuditEntry, Value>) -> Value {
        get { entry[keyPath: field] }
        set { entry[keyPath: field] = newValue }
    }
}
