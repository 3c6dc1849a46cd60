import Testing

@testable import RelayCore

/// Which deadlines have passed, in what order, and which never fire.
struct DeadlineScheduleTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test func deadlinesPassInDeadlineOrderWhateverTheOrderTheyCameIn() {
        var schedule = DeadlineSchedule()
        let late = schedule.add(at(30))
        let early = schedule.add(at(10))
        let middle = schedule.add(at(20))
        let alsoMiddle = schedule.add(at(20))
        #expect(schedule.next() == at(10))
        #expect(schedule.expire(now: at(9)) == [])
        #expect(schedule.expire(now: at(20)) == [early, middle, alsoMiddle])
        #expect(schedule.next() == at(30))
        #expect(schedule.count == 1)
        #expect(schedule.expire(now: at(100)) == [late])
        #expect(schedule.next() == nil)
        #expect(schedule.count == 0)
    }

    @Test func aRemovedDeadlineNeverPassesAndIsNotWaitedFor() {
        var schedule = DeadlineSchedule()
        let first = schedule.add(at(10))
        let second = schedule.add(at(20))
        schedule.remove(first)
        #expect(schedule.next() == at(20))
        schedule.remove(first)  // twice: nothing happens
        #expect(schedule.count == 1)
        #expect(schedule.expire(now: at(50)) == [second])
        schedule.remove(second)  // after it passed: nothing happens
        #expect(schedule.next() == nil)
    }

    /// Against a plain list of (id, deadline), under random additions, removals and expiries: the compaction and
    /// the lazy removal never lose, repeat or invent a deadline.
    @Test func agreesWithAPlainListUnderRandomUse() {
        var random = SeededGenerator(seed: 0xDEAD_11E5)
        var schedule = DeadlineSchedule()
        var model: [(id: UInt64, deadline: ContinuousClock.Instant)] = []
        var now = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                // Mostly in order (now plus a fixed wait), sometimes earlier.
                let wait = Int.random(in: 0..<10, using: &random) == 0 ? Int.random(in: 0..<100, using: &random) : 100
                let deadline = at(now + wait)
                model.append((schedule.add(deadline), deadline))
            case 5..<8:
                guard !model.isEmpty else { continue }
                let index = Int.random(in: 0..<model.count, using: &random)
                schedule.remove(model[index].id)
                model.remove(at: index)
            default:
                now += Int.random(in: 0..<30, using: &random)
                let expected = model.filter { $0.deadline <= at(now) }
                    .sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
                    .map(\.id)
                #expect(schedule.expire(now: at(now)) == expected)
                model.removeAll { $0.deadline <= at(now) }
            }
            #expect(schedule.count == model.count)
            #expect(schedule.next() == model.map(\.deadline).min())
        }
    }
}
