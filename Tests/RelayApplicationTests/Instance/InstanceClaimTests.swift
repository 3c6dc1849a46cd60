import Foundation
import Logging
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication

/// Issue 39 item 1: a second live process with the same instance id is refused with a message naming the id and the
/// holder; a holder that is certainly dead is taken over; `"auto"` makes distinct, stable ids.
@Suite(.timeLimit(.minutes(1)))
struct InstanceClaimTests {
    static let quiet = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func aSecondLiveProcessWithTheSameIDIsRefusedWithTheHolderNamed() async throws {
        let store = MemoryStore()
        let first = try await InstanceClaim.take(
            instance: "relay-1", store: store, logger: Self.quiet, holder: "host-a pid 10")
        do {
            _ = try await InstanceClaim.take(
                instance: "relay-1", store: store, logger: Self.quiet, holder: "host-b pid 20")
            Issue.record("a second holder took a live instance id")
        } catch let inUse as InstanceInUse {
            let message = inUse.description
            #expect(message.contains("\"relay-1\"") && message.contains("host-a pid 10"))
            #expect(message.contains("[audit] instance") && message.contains("auto"))
        }
        // Another id is free; once given back, this one is too.
        _ = try await InstanceClaim.take(instance: "relay-2", store: store, logger: Self.quiet, holder: "host-b pid 20")
        await first.release()
        _ = try await InstanceClaim.take(instance: "relay-1", store: store, logger: Self.quiet, holder: "host-b pid 20")
    }

    /// A container restarted: the same host name and process id as the holder, which therefore is gone; and a
    /// process of this host that no longer exists.
    @Test func aHolderThatIsCertainlyGoneIsTakenOver() async throws {
        let store = MemoryStore()
        _ = try await InstanceClaim.take(instance: "relay-1", store: store, logger: Self.quiet, holder: "box pid 1")
        _ = try await InstanceClaim.take(instance: "relay-1", store: store, logger: Self.quiet, holder: "box pid 1")
        let gone = pid_t(Int32.max - 7)
        _ = try await InstanceClaim.take(
            instance: "relay-2", store: store, logger: Self.quiet, holder: "box pid \(gone)")
        _ = try await InstanceClaim.take(
            instance: "relay-2", store: store, logger: Self.quiet, holder: "box pid \(getpid())")
        // A live process of this host is not taken over.
        await #expect(throws: InstanceInUse.self) {
            _ = try await InstanceClaim.take(
                instance: "relay-2", store: store, logger: Self.quiet, holder: "box pid \(getppid())")
        }
    }

    /// Renewed on the relay's clock: a claim after the first lease would have run out is still refused.
    @Test func theLeaseIsRenewedWhileTheRelayRuns() async throws {
        let clock = ManualClock()
        let store = MemoryStore()
        let claim = try await InstanceClaim.take(
            instance: "relay-1", store: store, clock: .manual(clock), logger: Self.quiet, lease: .seconds(60),
            holder: "host-a pid 10")
        clock.advance(by: .seconds(50))
        await claim.renew()
        clock.advance(by: .seconds(50))
        await #expect(throws: InstanceInUse.self) {
            _ = try await InstanceClaim.take(
                instance: "relay-1", store: store, clock: .manual(clock), logger: Self.quiet, holder: "host-b pid 20")
        }
        clock.advance(by: .seconds(11))
        _ = try await InstanceClaim.take(
            instance: "relay-1", store: store, clock: .manual(clock), logger: Self.quiet, holder: "host-b pid 20")
    }

    @Test func autoMakesAStableIDPerDataFolderAndDistinctOnesAcrossThem() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("instance-\(UUID().uuidString)")
        let (one, two) = (base.appendingPathComponent("one").path, base.appendingPathComponent("two").path)
        for folder in [one, two] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: base) }
        typealias Audit = RelayConfiguration.Audit

        let first = Audit.derivedInstance(stateFolder: one)
        #expect(first.instance.hasPrefix(Audit.defaultInstance + "-"))
        #expect(first.suffixFile == one + "/instance-id")
        #expect(Audit.instanceProblem(first.instance) == nil)
        #expect(Audit.derivedInstance(stateFolder: one).instance == first.instance, "the same across restarts")
        #expect(Audit.derivedInstance(stateFolder: two).instance != first.instance)
        // Without a folder to keep it in: new for each start.
        let loose = Audit.derivedInstance(stateFolder: nil)
        #expect(loose.suffixFile == nil && loose.instance != Audit.derivedInstance(stateFolder: nil).instance)

        // In a configuration: resolved beside the SQLite database, and said in the summary.
        let configuration = try RelayConfiguration.parse(
            toml: "[store]\nurl = \"sqlite://\(one)/relay.db\"\n[audit]\ninstance = \"auto\"\n",
            directory: base.path, environment: [:])
        #expect(configuration.audit.instance == first.instance)
        #expect(configuration.auditSummary.contains("id auto"))
    }
}
