import Crypto
import Foundation
import RelayCore
import RelayHTTP2
import RelaySimulator
import Synchronization
import Testing

@testable import RelayProviders

/// ``ProviderSender/send(each:report:)`` for APNs and FCM through the real transport against the provider simulator:
/// the pushes of one call make their first attempts together, and each push is still judged, retried and reported on
/// its own.
@Suite(.timeLimit(.minutes(1)))
struct ProviderSenderEachTests {
    typealias Harness = ProviderSimulatorEndToEndTests.Harness

    /// Every report with its position, as the sender gives them.
    final class Reports: Sendable {
        private let received = Mutex<[(position: Int, report: DeliveryReport)]>([])

        func record(_ position: Int, _ report: DeliveryReport) {
            received.withLock { $0.append((position, report)) }
        }

        var all: [(position: Int, report: DeliveryReport)] { received.withLock { $0 } }

        /// The report of each position, or `nil` when it was not reported exactly once.
        func byPosition(count: Int) -> [DeliveryReport]? {
            let all = self.all
            guard all.count == count, Set(all.map(\.position)) == Set(0..<count) else { return nil }
            return all.sorted { $0.position < $1.position }.map(\.report)
        }
    }

    static func token(_ provider: Provider, _ code: String, _ number: Int) -> String {
        let suffix = String(format: "%04d", number)
        switch provider {
        case .apns: return String((code + suffix + String(repeating: "ab", count: 32)).prefix(64))
        default: return code + suffix + "fcm:" + String(repeating: "Zx9_", count: 30)
        }
    }

    @Test(arguments: [Provider.apns, .fcm])
    func eachPushOfACallEndsOnItsOwnAfterTheFirstAttemptsWentTogether(provider: Provider) async throws {
        // A budget for every retry, so that each scripted fault gets the attempts its script asks for.
        let harness = try await Harness(retries: RetryLoop(budget: RetryBudget(cap: 100, initial: 100)))
        // Not `0429`: FCM's throttling asks for a minute, which moves the test clock past the simulator's tolerance for
        // the assertion of the credential renewed after it (the simulator's clock is the real one).
        let scripted = ["0410", "0401", "0503"]
        let codes = scripted + Array(repeating: "", count: 41)
        let tokens = codes.enumerated().map { Self.token(provider, $1, $0) }
        var message = PushMessage(to: tokens, title: "Deploy", body: "done")
        message.provider = provider
        let pushes = try resolved(message)
        let reports = Reports()
        if provider == .apns {
            await harness.apns.send(each: pushes, report: reports.record)
        } else {
            await harness.fcm.send(each: pushes, report: reports.record)
        }
        let byPosition = try #require(reports.byPosition(count: 44), "every push reported exactly once")
        #expect(byPosition[0].outcome.errorCode == "DeviceNotRegistered")
        #expect(byPosition[0].attempts == 1)
        // Credential refused once, unavailable twice: each retried in its own loop, then delivered.
        #expect(
            byPosition[1...2].map(\.outcome.shortDescription) == ["delivered", "delivered"], "\(byPosition[1...2])")
        #expect(byPosition[1...2].map(\.attempts) == [2, 3])
        let rest = byPosition[3...]
        #expect(rest.allSatisfy { $0.attempts == 1 })
        #expect(rest.allSatisfy { $0.outcome.shortDescription == "delivered" })
        let received = harness.simulator.received(provider == .apns ? .apns : .fcm)
        let attempts: Int = 41 + 1 + 2 + 3
        #expect(received.count == attempts, "one request per attempt of each push")
        try await harness.close()
    }

    @Test func pushesToBothAPNsEnvironmentsGoEachToItsOwnEndpoint() async throws {
        let harness = try await Harness()
        var production = PushMessage(
            to: (0..<3).map { Self.token(.apns, "", $0) }, title: "Deploy", body: "done", apnsEnvironment: .production)
        production.provider = .apns
        var sandbox = production
        sandbox.apnsEnvironment = .sandbox
        let pushes = try resolved(production) + resolved(sandbox) + resolved(production)
        let reports = Reports()
        await harness.apns.send(each: pushes, report: reports.record)
        let byPosition = try #require(reports.byPosition(count: 9))
        #expect(byPosition.allSatisfy { $0.outcome.shortDescription == "delivered" })
        // Two pools: one per environment (APNs binds a connection to its environment and key).
        let credentials = Set(harness.client.statistics.keys.map(\.credential))
        #expect(credentials.count == 2)
        #expect(harness.client.statistics.values.map(\.completed).sorted() == [3, 6])
        try await harness.close()
    }

    @Test func aMessageTooBigIsReportedInItsPlaceAndTheOthersGo() async throws {
        let harness = try await Harness()
        var big = PushMessage(
            to: [Self.token(.apns, "", 0)], title: "Deploy", body: String(repeating: "x", count: 5000))
        big.provider = .apns
        var small = PushMessage(
            to: [Self.token(.apns, "", 1), Self.token(.apns, "0410", 2)], title: "Deploy", body: "")
        small.provider = .apns
        let pushes = try resolved(small) + resolved(big)
        let reports = Reports()
        await harness.apns.send(each: pushes, report: reports.record)
        let byPosition = try #require(reports.byPosition(count: 3))
        #expect(byPosition.map(\.outcome.errorCode) == [nil, "DeviceNotRegistered", "MessageTooBig"])
        #expect(byPosition.map(\.attempts) == [1, 1, 0])
        #expect(harness.simulator.received(.apns).count == 2)
        try await harness.close()
    }

    /// ``ProviderSender/send(_:)-([ResolvedPush])`` for APNs goes the same way and returns the reports in order.
    @Test func sendingAnArrayReturnsEveryReportInItsPlace() async throws {
        let harness = try await Harness()
        let tokens = (0..<30).map { Self.token(.apns, $0 % 10 == 3 ? "0410" : "", $0) }
        var message = PushMessage(to: tokens, title: "Deploy", body: "done")
        message.provider = .apns
        let reports = await harness.apns.send(try resolved(message))
        #expect(reports.count == 30)
        for (position, report) in reports.enumerated() {
            #expect(report.outcome.errorCode == (position % 10 == 3 ? "DeviceNotRegistered" : nil), "\(position)")
        }
        try await harness.close()
    }
}

/// The pushes of one message share their APNs payload, encoded once; a push of another message gets its own.
@Suite struct APNsPayloadSharingTests {
    @Test func thePushesOfOneMessageShareTheirPayloadAndEachKeepsItsOwnHeaders() throws {
        let settings = PayloadSettings(
            apnsTopic: "com.example.app", apnsDefaultEnvironment: .production, fcmProjectId: "p")
        let upstream = APNsUpstream(
            configuration: APNsSenderConfiguration(payload: settings, productionEndpoint: "https://127.0.0.1:1"),
            tokens: APNsTokenProvider(teamID: "TEAM123456", keyID: "KEY1234567", key: P256.Signing.PrivateKey()),
            client: HTTP2Client()
        )
        var message = PushMessage(
            to: (0..<3).map { ProviderSenderEachTests.token(.apns, "", $0) }, title: "Deploy", body: "done",
            data: ["n": .int(1)], ttl: 60)
        message.provider = .apns
        var other = message
        other.title = "Rollback"
        let pushes = try resolved(message) + resolved(other)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var previous: (push: ResolvedPush, message: APNsRequest)?
        var built: [APNsRequest] = []
        for push in pushes {
            let request = try upstream.message(for: push, now: now, following: previous)
            built.append(request)
            previous = (push, request)
        }
        for (push, request) in zip(pushes, built) {
            let alone = try APNsRequest(
                push: push, settings: settings, now: now, apnsID: try #require(UUID(uuidString: request.apnsID)))
            #expect(request == alone, "the same request as one built alone")
        }
        #expect(Set(built.map(\.apnsID)).count == 6, "each push its own apns-id")
        #expect(built[3].body != built[0].body, "another message, another payload")
        let storage = built.map { $0.body.withUnsafeBufferPointer { $0.baseAddress } }
        #expect(storage[1] == storage[0] && storage[2] == storage[0], "encoded once for the pushes of one message")
        #expect(storage[3] != storage[0] && storage[4] == storage[3] && storage[5] == storage[3])
    }
}
