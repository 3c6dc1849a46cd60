import Foundation
package import RelayCore
import Synchronization

/// The audit log's account of requests refused without a valid key, by client address and minute: the first such
/// refusal of an address in a minute is recorded at once, as every refusal was before; the rest of that minute are
/// tallied here and written as one record at the minute's end (``drain(before:)``), with their count, the first and
/// last time, their outcomes and up to ``listedKeyIDs`` of the key ids presented.
///
/// So a caller without a key, however fast, adds at most two audit records per address and minute, and the table
/// holds at most ``maximumClients`` addresses (beyond them, refusals are tallied under no address), where before each
/// refusal was a record kept for the audit retention (50 requests with a junk key: 50 records). Refusals of an
/// authenticated caller are not tallied here: each stays one record.
package final class AnonymousRefusals: Sendable {
    /// The most addresses tallied at once; refusals from further addresses are tallied together, without address.
    package static let maximumClients = 10_000
    /// The most distinct key ids a tally names.
    package static let listedKeyIDs = 5

    private struct Key: Hashable {
        var client: String?
        var minute: Int64
    }

    private struct Tally {
        /// Refusals after the first, which was recorded at once (the overflow tally records none at once).
        var count = 0
        var firstMillis: Int64 = 0
        var lastMillis: Int64 = 0
        var outcomes: [String] = []
        var keyIDs: [String] = []
        var moreKeyIDs = false
    }

    private let tallies = Mutex<[Key: Tally]>([:])

    package init() {}

    /// Counts one refusal without a valid key; `true` when it is the first of its address in its minute and is to be
    /// recorded at once, `false` when it was tallied.
    package func refused(client: String?, millis: Int64, outcome: String, keyID: String?) -> Bool {
        let minute = millis.floorDivided(by: 60_000)
        return tallies.withLock { tallies in
            var key = Key(client: client, minute: minute)
            if tallies[key] == nil {
                guard tallies.count >= Self.maximumClients else {
                    tallies[key] = Tally()
                    return true
                }
                key.client = nil
            }
            var tally = tallies[key] ?? Tally()
            if tally.count == 0 { tally.firstMillis = millis }
            tally.count += 1
            tally.lastMillis = millis
            if !tally.outcomes.contains(outcome), tally.outcomes.count < 8 { tally.outcomes.append(outcome) }
            if let keyID, !tally.keyIDs.contains(keyID) {
                if tally.keyIDs.count < Self.listedKeyIDs {
                    tally.keyIDs.append(keyID)
                } else {
                    tally.moreKeyIDs = true
                }
            }
            tallies[key] = tally
            return false
        }
    }

    /// The records of the minutes that ended at or before `millis` (every minute when `nil`), taken out of the table.
    package func drain(before millis: Int64?) -> [AuditEntry] {
        let current = millis.map { $0.floorDivided(by: 60_000) }
        let ended = tallies.withLock { tallies in
            let ended = tallies.filter { key, _ in current.map { key.minute < $0 } ?? true }
            for key in ended.keys { tallies[key] = nil }
            return ended
        }
        return ended.filter { $0.value.count > 0 }
            .sorted { ($0.value.firstMillis, $0.key.client ?? "") < ($1.value.firstMillis, $1.key.client ?? "") }
            .map { key, tally in Self.entry(client: key.client, tally: tally) }
    }

    /// The number of addresses and minutes tallied (for tests and the memory bound).
    package var count: Int { tallies.withLock { $0.count } }

    private static func entry(client: String?, tally: Tally) -> AuditEntry {
        let first = AuditTime.date(millis: tally.firstMillis).formatted(.iso8601)
        let last = AuditTime.date(millis: tally.lastMillis).formatted(.iso8601)
        var detail = "aggregated: \(tally.count) more refusals without a valid key from \(first) to \(last)"
        if client == nil { detail += " (from addresses beyond the \(maximumClients) tallied)" }
        detail += "; outcomes: " + tally.outcomes.joined(separator: ", ")
        if !tally.keyIDs.isEmpty {
            detail += "; key ids: " + tally.keyIDs.joined(separator: ", ") + (tally.moreKeyIDs ? " and others" : "")
        }
        return AuditEntry(
            timeMillis: tally.lastMillis,
            event: .refused,
            keyID: tally.keyIDs.count == 1 && !tally.moreKeyIDs ? tally.keyIDs.first : nil,
            client: client,
            outcome: tally.outcomes.first,
            detail: detail
        )
    }
}

extension Int64 {
    /// Division rounding towards minus infinity (a time before 1970 is in the minute before, not after).
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}
