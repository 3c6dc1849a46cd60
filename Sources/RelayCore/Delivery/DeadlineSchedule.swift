/// Deadlines waiting to pass, for one timer that serves many waiters.
///
/// ### Overview
/// A push request waits for its outcomes until a deadline. One sleeping task per request costs a task group, two
/// child tasks and a system timer each time; the relay instead keeps every deadline here and runs one timer for the
/// earliest (``DeadlineTimer`` in RelayServer). Requests that end before their deadline remove it; the timer asks
/// which deadlines have passed and when to wake next.
///
/// ### Implementation
/// Entries are kept sorted by deadline from `head` on. Deadlines usually arrive in order (now plus one configured
/// wait), so an insertion is an append; one that arrives out of order is placed by binary search. A removal only
/// forgets the entry's id: the entry itself is dropped when it reaches the front (at once if it is the front), so
/// removing costs no search.
/// The array is compacted once more than half of it lies before `head`.
package struct DeadlineSchedule: Sendable {
    package typealias Instant = ContinuousClock.Instant

    private struct Entry: Sendable {
        var deadline: Instant
        var id: UInt64
    }

    private var entries: [Entry] = []
    private var head = 0
    /// The ids scheduled and neither removed nor passed.
    private var live: Set<UInt64> = []
    private var lastID: UInt64 = 0

    package init() {}

    /// The number of deadlines still scheduled.
    package var count: Int { live.count }

    /// Schedules `deadline` and returns its id.
    package mutating func add(_ deadline: Instant) -> UInt64 {
        lastID += 1
        let entry = Entry(deadline: deadline, id: lastID)
        if entries.last.map({ $0.deadline <= deadline }) ?? true {
            entries.append(entry)
        } else {
            // The first position from `head` whose deadline is later: equal deadlines keep their order.
            var low = head
            var high = entries.count
            while low < high {
                let middle = (low + high) / 2
                if entries[middle].deadline <= deadline { low = middle + 1 } else { high = middle }
            }
            entries.insert(entry, at: low)
        }
        live.insert(lastID)
        return lastID
    }

    /// Forgets the deadline `id`; nothing happens if it has passed or was removed already.
    package mutating func remove(_ id: UInt64) {
        guard live.remove(id) != nil else { return }
        // Waits mostly end in the order they began: dropping the front here keeps the array near the live count.
        if entries[head].id == id { dropForgottenFront() }
    }

    /// The earliest deadline still scheduled, if any.
    package mutating func next() -> Instant? {
        dropForgottenFront()
        return head < entries.count ? entries[head].deadline : nil
    }

    /// Removes and returns, earliest first, the ids whose deadline is `now` or earlier.
    package mutating func expire(now: Instant) -> [UInt64] {
        var passed: [UInt64] = []
        while head < entries.count, entries[head].deadline <= now {
            let entry = entries[head]
            head += 1
            if live.remove(entry.id) != nil { passed.append(entry.id) }
        }
        dropForgottenFront()
        return passed
    }

    private mutating func dropForgottenFront() {
        while head < entries.count, !live.contains(entries[head].id) { head += 1 }
        if head == entries.count {
            entries.removeAll(keepingCapacity: entries.count <= 4096)
            head = 0
        } else if head > 64, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
