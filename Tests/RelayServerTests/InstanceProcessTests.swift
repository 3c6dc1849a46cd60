import Foundation
import RelaySimulator
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 39 item 1, with real processes: a second `pushrelay serve` given the instance id of one that runs refuses to
/// start, saying which id, who holds it and what to set; once the first stops (giving its lease back), it starts.
@Suite(.timeLimit(.minutes(1)))
struct InstanceProcessTests {
    static func relayConf(port: Int) -> String {
        """
        [server]
        listen = "127.0.0.1:\(port)"

        [store]
        url = "sqlite://relay.db"

        [audit]
        instance = "twin"

        """
    }

    @Test func aSecondRelayWithTheSameInstanceIDRefusesToStart() async throws {
        let executable = try #require(
            RelayProcess.executableBesideThisOne, "pushrelay is built with the tests (swift build --build-tests)")
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("first.conf", Self.relayConf(port: try RelayProcess.freePort()))
        try folder.write("second.conf", Self.relayConf(port: try RelayProcess.freePort()))

        let first = try RelayProcess(executable: executable, config: folder.file("first.conf"))
        defer { first.kill(SIGKILL) }
        try await first.waitUntilListening()

        let second = try RelayProcess(executable: executable, config: folder.file("second.conf"))
        defer { second.kill(SIGKILL) }
        #expect(await second.exitStatus() == 1)
        let log = second.recentLog()
        #expect(log.contains("Another relay runs with this instance id"), "\(log)")
        #expect(log.contains("\"twin\" is in use by") && log.contains("pid \(first.pid)"), "\(log)")

        // The first stops gracefully and gives its lease back: the same id starts at once.
        first.kill(SIGTERM)
        #expect(await first.exitStatus() == 0)
        let third = try RelayProcess(executable: executable, config: folder.file("second.conf"))
        defer { third.kill(SIGKILL) }
        try await third.waitUntilListening()
        third.kill(SIGTERM)
        #expect(await third.exitStatus() == 0)
    }

    /// An address another process listens on: the relay says it cannot listen, naming the address, exits 1, and gives
    /// its instance lease back (a start right after it with the same id is not refused).
    @Test func anAddressInUseIsSaidAsSuchAndTheLeaseGivenBack() async throws {
        let executable = try #require(
            RelayProcess.executableBesideThisOne, "pushrelay is built with the tests (swift build --build-tests)")
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let port = try RelayProcess.freePort()
        try folder.write("first.conf", Self.relayConf(port: port).replacingOccurrences(of: "twin", with: "first"))
        try folder.write("second.conf", Self.relayConf(port: port))
        try folder.write("third.conf", Self.relayConf(port: try RelayProcess.freePort()))

        let first = try RelayProcess(executable: executable, config: folder.file("first.conf"))
        defer { first.kill(SIGKILL) }
        try await first.waitUntilListening()
        let second = try RelayProcess(executable: executable, config: folder.file("second.conf"))
        defer { second.kill(SIGKILL) }
        #expect(await second.exitStatus() == 1)
        let log = second.recentLog()
        #expect(log.contains("Cannot listen on the configured address"), "\(log)")
        #expect(log.contains("127.0.0.1:\(port)"), "\(log)")
        #expect(!log.contains("could not be given back"), "\(log)")

        let third = try RelayProcess(executable: executable, config: folder.file("third.conf"))
        defer { third.kill(SIGKILL) }
        try await third.waitUntilListening()
        third.kill(SIGTERM)
        #expect(await third.exitStatus() == 0)
    }
}
