import Foundation
import RelayCore
import RelayHTTP2
import RelaySimulator
import Synchronization
import Testing

@testable import RelayProviders

/// The senders through the real transport (libcurl, HTTP/2 over TLS) against the provider simulator.
@Suite(.timeLimit(.minutes(1)))
struct ProviderSimulatorEndToEndTests {
    /// A simulator, credentials, and senders wired to it, with recorded back-offs instead of real waits.
    struct Harness {
        let simulator: ProviderSimulator
        let credentials: SimulatorCredentials
        let client: HTTP2Client
        let sleeper: RecordingSleeper
        let clock = TestClock(Date())
        let apns: APNsSender
        let fcm: FCMSender
        let expo: ExpoSender
        let apnsTokens: APNsTokenProvider
        let fcmTokens: FCMAccessTokenProvider
        let settings: PayloadSettings

        /// - Parameters:
        ///   - retries: each sender's retry policy and its upstreams' gates (one loop per sender).
        ///   - environment: the senders' time; by default the test clock, which each recorded wait moves forward.
        init(
            requestTimeout: Duration = .seconds(20),
            retries: @autoclosure () -> RetryLoop = RetryLoop(),
            sleeper: RecordingSleeper = RecordingSleeper(),
            environment: SenderEnvironment? = nil,
            configure: (inout ProviderSimulator.Configuration) -> Void = { _ in }
        ) async throws {
            self.sleeper = sleeper
            credentials = try SimulatorCredentials()
            var configuration = credentials.simulatorConfiguration()
            configure(&configuration)
            simulator = try await ProviderSimulator.start(configuration: configuration)
            client = HTTP2Client(
                configuration: .init(maxConnections: 2, requestTimeout: requestTimeout, caFile: simulator.caFilePath))
            settings = PayloadSettings(
                apnsTopic: credentials.apnsBundleID, apnsDefaultEnvironment: .sandbox,
                fcmProjectId: credentials.fcmProjectID)
            let environment = environment ?? SenderEnvironment.test(clock: clock, sleeper: sleeper, unit: 0.5)
            let clock = self.clock
            apnsTokens = APNsTokenProvider(
                teamID: credentials.apnsTeamID, keyID: credentials.apnsKeyID, key: credentials.apnsPrivateKey,
                now: { clock.now })
            apns = APNsSender(
                upstream: APNsUpstream(
                    configuration: APNsSenderConfiguration(
                        payload: settings, productionEndpoint: simulator.baseURL, sandboxEndpoint: simulator.baseURL),
                    tokens: apnsTokens, client: client
                ),
                retries: retries(),
                environment: environment
            )
            let account = try ServiceAccount.parse(
                Data(credentials.serviceAccountJSON(tokenURI: simulator.fcmTokenURI).utf8))
            fcmTokens = try FCMAccessTokenProvider(account: account, client: client, now: { clock.now })
            fcm = FCMSender(
                upstream: FCMUpstream(
                    configuration: FCMSenderConfiguration(payload: settings, endpoint: simulator.baseURL),
                    tokens: fcmTokens, client: client),
                retries: retries(),
                environment: environment
            )
            expo = ExpoSender(
                upstream: ExpoUpstream(
                    configuration: ExpoSenderConfiguration(payload: settings, endpoint: simulator.baseURL),
                    client: client), retries: retries(), environment: environment)
        }

        func close() async throws {
            await client.shutdown()
            try await simulator.shutdown()
        }
    }

    static let critical = PushMessage(
        to: [], title: "Incident #12", body: "DB down", data: ["incidentId": .string("12")], isCriticalAlert: true)
    static let plain = PushMessage(to: [], title: "Deploy", body: "done", priority: .normal)

    func pushes(_ base: PushMessage, tokens: [String], provider: Provider) throws -> [ResolvedPush] {
        var message = base
        message.to = tokens
        message.provider = provider
        return try resolved(message)
    }

    @Test func criticalAndPlainPushesArriveAsBuiltForEveryProvider() async throws {
        let harness = try await Harness()
        for base in [Self.critical, Self.plain] {
            let apnsPush = try pushes(base, tokens: [ProviderTestTokens.apns()], provider: .apns)[0]
            let apnsReport = await harness.apns.send(apnsPush)
            guard case .delivered(let apnsID?) = apnsReport.outcome else {
                Issue.record("APNs: \(apnsReport)")
                continue
            }
            let arrived = try #require(harness.simulator.received(.apns).last)
            #expect(arrived.header("apns-id") == apnsID)
            #expect(arrived.header("apns-topic") == harness.credentials.apnsBundleID)
            #expect(arrived.header("apns-priority") == (base.isCritical ? "10" : "5"))
            // Byte for byte: the body that arrived is the body the builder made (apart from nothing).
            let expected = try APNsRequest(
                push: apnsPush, settings: harness.settings, now: harness.clock.now,
                apnsID: try #require(UUID(uuidString: apnsID)))
            #expect(arrived.body == expected.body)
            #expect(arrived.header("authorization")?.hasPrefix("bearer ") == true)

            let fcmPush = try pushes(base, tokens: [ProviderTestTokens.fcm()], provider: .fcm)[0]
            let fcmReport = await harness.fcm.send(fcmPush)
            #expect(fcmReport.outcome.shortDescription == "delivered", "\(fcmReport)")
            let fcmArrived = try #require(harness.simulator.received(.fcm).last)
            #expect(
                fcmArrived.body
                    == (try FCMRequest(push: fcmPush, settings: harness.settings, now: harness.clock.now)).body)
            #expect(fcmArrived.path == "/v1/projects/\(harness.credentials.fcmProjectID)/messages:send")

            let expoPush = try pushes(base, tokens: [ProviderTestTokens.expo()], provider: .expo)
            let expoReports = await harness.expo.send(expoPush)
            #expect(expoReports.first?.receiptPending == true)
            let expoArrived = try #require(harness.simulator.received(.expoSend).last)
            let sentMessage = try ExpoMessage(push: expoPush[0], settings: harness.settings).json
            #expect(JSONValue.decode(expoArrived.body) == .array([.object(sentMessage)]))
            if base.isCritical {
                #expect(expoArrived.bodyText.contains(#""channelId":"oncall_critical""#))
                #expect(fcmArrived.bodyText.contains(#""channel_id":"oncall_critical""#))
                #expect(arrived.bodyText.contains(#""interruption-level":"critical""#))
            }
        }
        try await harness.close()
    }

    @Test func oneJWTServesManySendsAndTheSimulatorAcceptsIt() async throws {
        let harness = try await Harness()
        let all = try pushes(
            Self.plain, tokens: (0..<40).map { ProviderTestTokens.apns(String(format: "%04x", 0x1000 + $0)) },
            provider: .apns)
        let reports = await harness.apns.send(all)
        #expect(reports.allSatisfy { $0.outcome.shortDescription == "delivered" })
        #expect(await harness.apnsTokens.signatures == 1)
        let auths = Set(harness.simulator.received(.apns).compactMap { $0.header("authorization") })
        #expect(auths.count == 1)
        try await harness.close()
    }

    @Test(arguments: [Provider.apns, .fcm, .expo])
    func scriptedOutcomesReachEveryClass(_ provider: Provider) async throws {
        let harness = try await Harness()
        func token(_ code: String) -> String {
            switch provider {
            case .apns: ProviderTestTokens.apns(code)
            case .fcm: ProviderTestTokens.fcm(code)
            case .expo: ProviderTestTokens.expo(code)
            }
        }
        let sender: any PushSender =
            switch provider {
            case .apns: harness.apns
            case .fcm: harness.fcm
            case .expo: harness.expo
            }
        let codes = ["", "0410", "0400", "0403", "0413", "0503", "0429", "0500"]
        // One send per token: Expo fails a whole upstream request at once, so scripted request-level failures would
        // otherwise hit every message of the batch.
        var reports: [DeliveryReport] = []
        for code in codes {
            reports += await sender.send(try pushes(Self.plain, tokens: [token(code)], provider: provider))
        }
        let classes = reports.map(\.outcome.shortDescription)
        #expect(classes[0] == "delivered")
        #expect(classes[1] == "token_invalid")
        #expect(reports[1].outcome.errorCode == "DeviceNotRegistered")
        #expect(classes[2] == "token_invalid")
        #expect(classes[3] == "configuration_error", "a topic or sender mismatch never blames the token")
        #expect(classes[4] == "rejected")
        #expect(reports[4].outcome.errorCode == "MessageTooBig")
        #expect(classes[5] == "delivered", "503 twice, then delivered on the third attempt")
        #expect(reports[5].attempts == 3)
        #expect(classes[6] == "delivered", "429 once, then delivered")
        #expect(classes[7] == "unavailable", "always 500: retried until its deadline")
        #expect(reports[7].attempts > 3)
        #expect(reports[7].latency == RetryPolicy.defaultWindow)
        if provider != .expo {
            #expect(reports[2].outcome.errorCode == "InvalidToken")
        }
        try await harness.close()
    }

    @Test func aSlowUpstreamTimesOutIntoUnavailableAtItsDeadline() async throws {
        // A timeout long enough that the fast push beside the slow one is answered in time even when the whole suite
        // shares the machine (300 ms was not, under load), and an upstream far slower than it. A 2 s window: back-offs
        // of 0.5 s and 1 s, then a last attempt at the deadline (each attempt a real 1 s timeout). Retries after a
        // timeout are not bounded here (they are in UpstreamOutageTests).
        let harness = try await Harness(
            requestTimeout: .seconds(1),
            retries: RetryLoop(policy: RetryPolicy(window: .seconds(2)), maxAttemptsAfterTimeout: 10)
        ) { $0.slowLatency = .seconds(30) }
        let report = await harness.apns.send(
            try pushes(Self.plain, tokens: [ProviderTestTokens.apns("0555")], provider: .apns)[0])
        #expect(report.outcome == RetryLoop.noAnswer)
        #expect(report.attempts == 4)
        #expect(report.latency == .seconds(2))
        // The fast token beside it is unaffected.
        let fast = await harness.apns.send(
            try pushes(Self.plain, tokens: [ProviderTestTokens.apns()], provider: .apns)[0])
        #expect(fast.outcome.shortDescription == "delivered")
        try await harness.close()
    }

    @Test func aResumedPushIsRetriedOnlyUntilTheDeadlineItWasAdmittedWith() async throws {
        let harness = try await Harness()
        // Always 500: retried until its deadline. Resumed from the journal, a push carries the deadline it was
        // admitted with; past it, one attempt is all it gets.
        var push = try pushes(Self.plain, tokens: [ProviderTestTokens.apns("0500")], provider: .apns)[0]
        push.sendDeadline = harness.clock.now.addingTimeInterval(-1)
        let late = await harness.apns.send(push)
        #expect(late.outcome.shortDescription == "unavailable")
        #expect(late.attempts == 1)
        // With 20 s of its 300 s window left, its retries end 20 s after this send.
        push.sendDeadline = harness.clock.now.addingTimeInterval(20)
        let resumed = await harness.apns.send(push)
        #expect(resumed.outcome.shortDescription == "unavailable")
        #expect(resumed.latency == .seconds(20))
        // A push without one (a new push) gets the whole window from its send.
        push.sendDeadline = nil
        #expect(await harness.apns.send(push).latency == RetryPolicy.defaultWindow)
        try await harness.close()
    }

    @Test func retryAfterFromTheUpstreamIsHonoured() async throws {
        let harness = try await Harness()
        let report = await harness.apns.send(
            try pushes(Self.plain, tokens: [ProviderTestTokens.apns("0429")], provider: .apns)[0])
        #expect(report.outcome.shortDescription == "delivered")
        let fcmReport = await harness.fcm.send(
            try pushes(Self.plain, tokens: [ProviderTestTokens.fcm("0429")], provider: .fcm)[0])
        #expect(fcmReport.outcome.shortDescription == "delivered")
        // FCM's QUOTA_EXCEEDED waits at least a minute, whatever retry-after says.
        #expect(harness.sleeper.recorded.contains(.seconds(60)))
        try await harness.close()
    }

    @Test func expiredCredentialsAreRenewedOnceAndRetried() async throws {
        let harness = try await Harness()
        let apns = await harness.apns.send(
            try pushes(Self.plain, tokens: [ProviderTestTokens.apns("0401")], provider: .apns)[0])
        #expect(apns.outcome.shortDescription == "delivered")
        #expect(apns.attempts == 2)
        #expect(await harness.apnsTokens.signatures == 2)
        let fcm = await harness.fcm.send(
            try pushes(Self.plain, tokens: [ProviderTestTokens.fcm("0401")], provider: .fcm)[0])
        #expect(fcm.outcome.shortDescription == "delivered")
        #expect(await harness.fcmTokens.fetches == 2)
        try await harness.close()
    }

    @Test func aMessageKeepsItsAPNsIDAcrossRetries() async throws {
        let harness = try await Harness()
        let report = await harness.apns.send(
            try pushes(Self.plain, tokens: [ProviderTestTokens.apns("0503")], provider: .apns)[0])
        #expect(report.attempts == 3)
        let ids = harness.simulator.received(.apns).compactMap { $0.header("apns-id") }
        #expect(ids.count == 3)
        #expect(Set(ids).count == 1)
        try await harness.close()
    }

    @Test func expoBatchesAtMostOneHundredPerUpstreamRequest() async throws {
        let harness = try await Harness()
        // 250 Expo messages of one relay request (three messages of at most 100 tokens each).
        let tokens = (0..<250).map { "ExponentPushToken[batch-\($0)]" }
        let all = try stride(from: 0, to: 250, by: 100).flatMap {
            try pushes(Self.plain, tokens: Array(tokens[$0..<min($0 + 100, 250)]), provider: .expo)
        }
        let reports = await harness.expo.send(all)
        #expect(reports.count == 250)
        #expect(reports.allSatisfy { $0.outcome.shortDescription == "delivered" && $0.receiptPending })
        let requests = harness.simulator.received(.expoSend)
        #expect(requests.count == 3)
        #expect(
            requests.compactMap {
                JSONValue.decode($0.body).flatMap { if case .array(let a) = $0 { a.count } else { nil } }
            }.sorted() == [50, 100, 100])
        // Tickets map back in order: every report's ticket id is the one Expo gave for that position.
        let ticketIDs = Set(reports.compactMap { if case .delivered(let id?) = $0.outcome { id } else { nil } })
        #expect(ticketIDs.count == 250)
        try await harness.close()
    }

    @Test func ticketsOlderThanExpoKeepsReceiptsAreClosedNotAskedForAgain() async throws {
        let harness = try await Harness()
        let now = harness.clock.now
        let store = RecordingReceiptStore(pending: [
            ("ancient", now.addingTimeInterval(-25 * 3600)), ("recent", now.addingTimeInterval(-60)),
        ])
        let poller = ExpoReceiptPoller(
            configuration: ExpoSenderConfiguration(payload: harness.settings, endpoint: harness.simulator.baseURL),
            store: store, client: harness.client, delay: .zero,
            environment: .test(clock: harness.clock, sleeper: harness.sleeper)
        )
        _ = try await poller.pollOnce()
        #expect(store.recorded["ancient"]?.errorCode == "ProviderUnavailable")
        #expect(store.recorded["ancient"]?.removeToken == false)
        // The recent ticket is unknown to the simulator: asked for, absent, still pending.
        #expect(store.recorded["recent"] == nil)
        #expect(try await store.pendingExpoTickets(sentBefore: now, limit: 10) == ["recent"])
        try await harness.close()
    }

    /// A short delay is polled about as often as it lasts; the default delay once a minute.
    @Test func thePollIntervalFollowsTheDelayWithinASecondAndAMinute() {
        #expect(ExpoReceiptPoller.interval(forDelay: .seconds(900)) == .seconds(60))
        #expect(ExpoReceiptPoller.interval(forDelay: .seconds(5)) == .seconds(5))
        #expect(ExpoReceiptPoller.interval(forDelay: .zero) == .seconds(1))
    }

    @Test func aReceiptIsFirstAskedForOnlyAfterTheConfiguredDelay() async throws {
        let harness = try await Harness()
        let reports = await harness.expo.send(
            try pushes(Self.plain, tokens: [ProviderTestTokens.expo("0610")], provider: .expo))
        let ticket = try #require(
            reports.first.flatMap { if case .delivered(let id?) = $0.outcome { id } else { nil } })
        let store = RecordingReceiptStore(pending: [ticket], sent: harness.clock.now)
        let poller = ExpoReceiptPoller(
            configuration: ExpoSenderConfiguration(payload: harness.settings, endpoint: harness.simulator.baseURL),
            store: store, client: harness.client, delay: .seconds(120),
            environment: .test(clock: harness.clock, sleeper: harness.sleeper)
        )
        // The receipt is ready at once, but the poller does not ask before the delay has passed.
        #expect(try await poller.pollOnce() == 0)
        harness.clock.advance(by: 119)
        #expect(try await poller.pollOnce() == 0)
        #expect(harness.simulator.received(.expoReceipts).isEmpty)
        #expect(store.recorded.isEmpty)

        harness.clock.advance(by: 2)
        #expect(try await poller.pollOnce() == 1)
        #expect(harness.simulator.received(.expoReceipts).count == 1)
        #expect(store.recorded[ticket]?.errorCode == "DeviceNotRegistered")
        try await harness.close()
    }

    @Test func receiptPollerReportsFinalOutcomes() async throws {
        let harness = try await Harness()
        let reports = await harness.expo.send(
            try pushes(
                Self.plain, tokens: [ProviderTestTokens.expo(), ProviderTestTokens.expo("0610")], provider: .expo))
        let tickets = reports.compactMap { if case .delivered(let id?) = $0.outcome { id } else { nil } }
        #expect(tickets.count == 2)
        let store = RecordingReceiptStore(pending: tickets, sent: harness.clock.now)
        harness.clock.advance(by: 1)
        let poller = ExpoReceiptPoller(
            configuration: ExpoSenderConfiguration(payload: harness.settings, endpoint: harness.simulator.baseURL),
            store: store, client: harness.client, delay: .zero,
            environment: .test(clock: harness.clock, sleeper: harness.sleeper)
        )
        #expect(try await poller.pollOnce() == 2)
        let outcomes = store.recorded
        #expect(outcomes[tickets[0]] == .delivered(providerMessageID: tickets[0]))
        #expect(outcomes[tickets[1]]?.errorCode == "DeviceNotRegistered")
        #expect(outcomes[tickets[1]]?.removeToken == true)
        try await harness.close()
    }
}

/// Pending tickets in (with the time they were sent), recorded outcomes out.
final class RecordingReceiptStore: ExpoReceiptStore {
    private let state: Mutex<(pending: [(id: String, sent: Date)], recorded: [String: DeliveryOutcome])>

    init(pending: [String], sent: Date = .distantPast) {
        state = Mutex((pending.map { ($0, sent) }, [:]))
    }

    init(pending: [(id: String, sent: Date)]) {
        state = Mutex((pending, [:]))
    }

    var recorded: [String: DeliveryOutcome] { state.withLock { $0.recorded } }

    func pendingExpoTickets(sentBefore: Date, limit: Int) async throws -> [String] {
        state.withLock { state in Array(state.pending.filter { $0.sent < sentBefore }.map(\.id).prefix(limit)) }
    }

    func recordExpoReceipt(ticketID: String, outcome: DeliveryOutcome) async throws -> Bool {
        state.withLock { state in
            guard state.pending.contains(where: { $0.id == ticketID }) else { return false }
            state.recorded[ticketID] = outcome
            state.pending.removeAll { $0.id == ticketID }
            return true
        }
    }
}
