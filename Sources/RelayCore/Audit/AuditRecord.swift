package import Foundation

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
package struct AuditRecord: Sendable, Equatable {
    /// The id of the chain (the writing instance).
    package var chain: String
    /// 1-based, consecutive within the chain.
    package var seq: Int64
    package var timeMillis: Int64
    package var event: AuditEvent
    package var tenantID: String?
    package var keyID: String?
    package var requestID: String?
    package var client: String?
    package var provider: String?
    package var tokenFingerprint: String?
    package var critical: Bool?
    package var outcome: String?
    package var upstreamStatus: Int?
    package var upstreamReason: String?
    package var attempts: Int?
    package var latencyMillis: Int?
    package var actor: String?
    package var before: JSONValue?
    package var after: JSONValue?
    package var detail: String?
    /// SHA-256 of the previous record's link followed by this record's canonical bytes: 32 bytes.
    package var link: [UInt8]

    /// The time at millisecond precision.
    package var time: Date {
        get { AuditTime.date(millis: timeMillis) }
        set { timeMillis = AuditTime.millis(newValue) }
    }

    /// A record from its place in a chain, its content and its link, e.g. when read back from a store. Records are
    /// made by ``AuditChain/append(_:)``, which computes the link.
    package init(chain: String, seq: Int64, entry: AuditEntry, link: [UInt8]) {
        self.chain = chain
        self.seq = seq
        self.timeMillis = entry.timeMillis
        self.event = entry.event
        self.tenantID = entry.tenantID
        self.keyID = entry.keyID
        self.requestID = entry.requestID
        self.client = entry.client
        self.provider = entry.provider
        self.tokenFingerprint = entry.tokenFingerprint
        self.critical = entry.critical
        self.outcome = entry.outcome
        self.upstreamStatus = entry.upstreamStatus
        self.upstreamReason = entry.upstreamReason
        self.attempts = entry.attempts
        self.latencyMillis = entry.latencyMillis
        self.actor = entry.actor
        self.before = entry.before
        self.after = entry.after
        self.detail = entry.detail
        self.link = link
    }

    /// The record's content, without its place in the chain.
    package var entry: AuditEntry {
        AuditEntry(
            timeMillis: timeMillis, event: event, tenantID: tenantID, keyID: keyID, requestID: requestID,
            client: client, provider: provider, tokenFingerprint: tokenFingerprint, critical: critical,
            outcome: outcome, upstreamStatus: upstreamStatus, upstreamReason: upstreamReason, attempts: attempts,
            latencyMillis: latencyMillis, actor: actor, before: before, after: after, detail: detail
        )
    }
}
