import Foundation
import RelayStore
import Testing

/// Instance leases (issue 39 item 1), on every store of ``StoreKind/all``: one holder per id, taken over once its
/// lease has run out, renewed and given back only by its holder.
@Suite(.timeLimit(.minutes(1)))
struct InstanceLeaseConformanceTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func lease(_ token: String, holder: String, at start: Date = t0, seconds: Double = 60) -> InstanceLease {
        InstanceLease(
            instance: "relay-1", token: token, holder: holder, startedAt: start,
            leaseUntil: start.addingTimeInterval(seconds))
    }

    @Test(arguments: StoreKind.all)
    func oneLiveHolderPerInstanceID(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let first = Self.lease("a", holder: "host-a pid 10")
            #expect(try await store.claimInstance(first, now: Self.t0) == first)
            // Claimed again by its holder: still its own.
            #expect(try await store.claimInstance(first, now: Self.t0.addingTimeInterval(1)) == first)

            // A second process, while the lease runs: refused, told who holds it.
            let second = Self.lease("b", holder: "host-b pid 20", at: Self.t0.addingTimeInterval(30))
            #expect(try await store.claimInstance(second, now: Self.t0.addingTimeInterval(30)) == first)

            // Renewed by its holder only.
            #expect(try await store.renewInstance("relay-1", token: "a", until: Self.t0.addingTimeInterval(90)))
            #expect(try await !store.renewInstance("relay-1", token: "b", until: Self.t0.addingTimeInterval(90)))
            #expect(try await store.claimInstance(second, now: Self.t0.addingTimeInterval(75)).token == "a")

            // Run out: taken over; the old holder can no longer renew it.
            let late = Self.lease("b", holder: "host-b pid 20", at: Self.t0.addingTimeInterval(91))
            #expect(try await store.claimInstance(late, now: Self.t0.addingTimeInterval(91)) == late)
            #expect(try await !store.renewInstance("relay-1", token: "a", until: Self.t0.addingTimeInterval(200)))

            // Given back by someone else: nothing happens; by its holder: free at once.
            try await store.releaseInstance("relay-1", token: "a")
            let third = Self.lease("c", holder: "host-c pid 30", at: Self.t0.addingTimeInterval(92))
            #expect(try await store.claimInstance(third, now: Self.t0.addingTimeInterval(92)).token == "b")
            try await store.releaseInstance("relay-1", token: "b")
            #expect(try await store.claimInstance(third, now: Self.t0.addingTimeInterval(92)) == third)
        }
    }
}
