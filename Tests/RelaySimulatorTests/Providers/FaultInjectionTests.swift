import Foundation
import HTTP2TestClient
import NIOHTTP2
import Testing

@testable import RelaySimulator

/// Fault injection: a switch a test turns on and off, faulting an evenly spread share of the send requests.
@Suite struct FaultInjectionTests {
    @Test func aShareIsSpreadEvenlyAndTheSameEveryTime() {
        let faults = ProviderSimulator.FaultSwitch()
        faults.set(FaultInjection(.serviceUnavailable, share: 0.3))
        let faulted = (1...20).filter { _ in faults.next() != nil }
        #expect(faulted == [4, 7, 10, 14, 17, 20])
        #expect(faults.injected == 6)
        faults.set(nil)
        #expect((1...5).allSatisfy { _ in faults.next() == nil })
        faults.set(.outage(.stall))
        #expect((1...5).allSatisfy { _ in faults.next() == .stall })
        #expect(faults.injected == 11)
    }

    @Test func theShareIsKeptBetweenZeroAndOne() {
        #expect(FaultInjection(.resetStream, share: 3).share == 1)
        #expect(FaultInjection(.resetStream, share: -1).share == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func anOutageFailsEverySendUntilItIsSwitchedOffAndSparesTheTokenEndpoint() async throws {
        try await withSimulator { simulator, client, credentials in
            simulator.injectFaults(.outage(.serviceUnavailable))
            let accessToken = try await fcmAccessToken(client, simulator, credentials)  // never faulted
            let apns = try await sendAPNs(client, credentials)
            let fcm = try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: "abc"))
            let expo = try await sendExpo(client, body: #"[{"to":"ExponentPushToken[abc]"}]"#)
            #expect(apns.status == 503)
            #expect(try json(apns)["reason"] == "ServiceUnavailable")
            #expect(fcm.status == 503)
            #expect(fcmErrorCode(try json(fcm)) == "UNAVAILABLE")
            #expect(expo.status == 503)
            #expect(simulator.faultsInjected == 3)

            simulator.injectFaults(nil)
            #expect(try await sendAPNs(client, credentials).status == 200)
            #expect(simulator.received().map(\.status) == [200, 503, 503, 503, 200])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aResetFaultResetsTheStreamWithoutAnAnswer() async throws {
        try await withSimulator { simulator, client, credentials in
            simulator.injectFaults(.outage(.resetStream))
            await #expect(throws: (any Error).self) { try await sendAPNs(client, credentials) }
            #expect(simulator.faultsInjected == 1)
            #expect(simulator.received().isEmpty, "nothing was answered")
            try await simulator.server.waitForStatistics { $0.resetsSent == 1 }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aStallFaultLeavesTheRequestUnansweredAndTheConnectionUsable() async throws {
        try await withSimulator { simulator, client, credentials in
            simulator.injectFaults(.outage(.stall))
            let stalled = Task { try await sendAPNs(client, credentials) }
            await simulator.waitForFaults(atLeast: 1)
            simulator.injectFaults(nil)
            // The same connection still answers other requests; the stalled one stays open, unanswered.
            let answered = try await sendAPNs(client, credentials)
            #expect(answered.status == 200)
            #expect(simulator.received().map(\.status) == [200])
            #expect(simulator.server.statistics.streamsInFlight == 1)
            #expect(simulator.server.statistics.connectionsAccepted == 1)
            stalled.cancel()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aDropFaultCutsTheConnection() async throws {
        try await withSimulator { simulator, client, credentials in
            simulator.injectFaults(.outage(.dropConnection))
            await #expect(throws: (any Error).self) { try await sendAPNs(client, credentials) }
            try await simulator.server.waitForStatistics { $0.connectionsOpen == 0 }
            #expect(simulator.faultsInjected == 1)
        }
    }
}
