/// What the fault run learned about each push of a scenario: how its request was answered, its ticket, its final
/// receipt, and whether the upstream (the simulator, by its own record) accepted it.
///
/// A push is known by its ticket id, which is also its receipt id and, for APNs, the `apns-id` of every send of it:
/// so the simulator's record says which tickets it accepted, whatever the relay claims.
struct FaultLedger {
    /// Pushes sent (in requests, answered or not).
    var pushes = 0
    /// Each ticket of a request answered 200 or 202, by id: its status in the answer (`ok`, `error`, `pending`).
    var tickets: [String: String] = [:]
    /// Pushes of requests not answered 200 or 202, by what happened (`status 503`, `no answer`).
    var refused: [String: Int] = [:]
    /// The final status (`ok` or `error`) of each ticket whose receipt became final.
    var receipts: [String: String] = [:]
    /// Ticket ids whose receipt was still pending when following ended.
    var stuck: Set<String> = []
    /// Ticket ids the receipt lookups did not return at all (unknown to the relay).
    var missing: Set<String> = []

    /// Adds what another part of the scenario learned (a second run of the relay, say).
    mutating func merge(_ other: FaultLedger) {
        pushes += other.pushes
        tickets.merge(other.tickets) { first, _ in first }
        refused.merge(other.refused, uniquingKeysWith: +)
    }

    /// The counts of a scenario, given the `apns-id`s (lowercased) the upstream answered 200 and, where the
    /// scenario counts them, how many times each `apns-id` arrived at the upstream (every send, whatever its answer).
    func tally(upstreamAccepted: Set<String>, arrivals: [String: Int] = [:]) -> Tally {
        var tally = Tally(pushes: pushes)
        tally.answered = tickets.count
        tally.answeredPending = tickets.values.filter { $0 == "pending" }.count
        tally.refused = refused.values.reduce(0, +)
        tally.unavailable = refused["status 503"] ?? 0
        tally.tooManyRequests = refused["status 429"] ?? 0
        tally.mostArrivals = arrivals.values.max() ?? 0
        tally.arrivedAgain = arrivals.values.filter { $0 > 1 }.count
        tally.stuck = stuck.count
        tally.missing = missing.count
        for (id, ticket) in tickets {
            let accepted = upstreamAccepted.contains(id)
            guard let receipt = receipts[id] else {
                // Stuck or missing: answered, and no final receipt.
                tally.lost += 1
                continue
            }
            // The ticket, once final, must say what the receipt says; the receipt what the upstream did.
            let ticketAgrees = ticket == "pending" || ticket == receipt
            switch (receipt, accepted) {
            case ("ok", true) where ticketAgrees:
                tally.delivered += 1
            case ("error", false) where ticketAgrees:
                tally.failed += 1
            default:
                tally.disagreeing += 1
                tally.lost += 1
            }
        }
        tally.upstreamAccepted = upstreamAccepted.count
        tally.untracked = upstreamAccepted.subtracting(tickets.keys).count
        return tally
    }

    /// A scenario's counts.
    struct Tally {
        var pushes = 0
        /// Pushes answered with a ticket (200 or 202).
        var answered = 0
        /// Of those, answered `pending`: the relay journaled them before answering.
        var answeredPending = 0
        /// Final receipt `ok`, and the upstream accepted the push.
        var delivered = 0
        /// Final receipt `error`, and the upstream never accepted the push.
        var failed = 0
        /// Answered with a ticket, and no final receipt, or one that disagrees with the upstream or the ticket.
        var lost = 0
        /// Of ``lost``: the receipt was still pending when following ended.
        var stuck = 0
        /// Of ``lost``: no receipt at all.
        var missing = 0
        /// Of ``lost``: a final receipt that disagrees with the upstream's record (or with a final ticket).
        var disagreeing = 0
        /// Pushes of requests not answered with tickets (refused, or no answer).
        var refused = 0
        /// Of ``refused``: pushes of requests answered 503 (the store unavailable, say).
        var unavailable = 0
        /// Of ``refused``: pushes of requests answered 429 (a rate limit or quota).
        var tooManyRequests = 0
        /// The most times one push arrived at the upstream (0 where the scenario does not count arrivals).
        var mostArrivals = 0
        /// Pushes that arrived at the upstream more than once (0 where the scenario does not count arrivals).
        var arrivedAgain = 0
        /// Distinct pushes the upstream answered 200.
        var upstreamAccepted = 0
        /// Of those, pushes without a ticket: sent by the relay for a request whose answer never arrived.
        var untracked = 0

        /// `delivered` as a percentage of the pushes sent.
        var deliveredPercent: Double {
            pushes == 0 ? 0 : Double(delivered) / Double(pushes) * 100
        }
    }
}
