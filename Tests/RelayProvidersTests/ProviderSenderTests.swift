import Crypto
import Foundation
import RelayCore
import RelayHTTP2
import RelaySimulator
import Testing

@testable import RelayProviders

/// The sender skeleton through the real transport against the provider simulator: what a batch sends again, and the
/// pool each endpoint keeps.
@Suite(.timeLimit(.minutes(1)))
struct ProviderSenderTests {
    typealias Harness = ProviderSimulatorEndToEndTests.Harness

    func pushes(tokens: [String], provider: Provider) throws -> [ResolvedPush] {
        try stride(from: 0, to: tokens.count, by: 100).flatMap { start in
            var message = PushMessage(
                to: Array(tokens[start..<min(start + 100, tokens.count)]), title: "Deploy", body: "done")
            message.provider = provider
            return try resolved(message)
        }
    }

    @Test func anExpoBatchSendsAgainOnlyTheRequestThatFailed() async throws {
        let harness = try await Harness()
        // 150 messages in two upstream requests; the first request's first token is throttled once (whole-request 429).
        let tokens = ["ExponentPushToken[0429-batch]"] + (1..<150).map { "ExponentPushToken[batch-\($0)]" }
        // A budget for every retry: the default one (10, plus 0.2 per message) would retry 40 of the 100.
        let expo = ExpoSender(
            upstream: harness.expo.upstream,
            retries: RetryLoop(budget: RetryBudget(cap: 100, initial: 100)),
            environment: .test(clock: harness.clock, sleeper: harness.sleeper, unit: 0.5)
        )
        let reports = await expo.send(try pushes(tokens: tokens, provider: .expo))
        #expect(reports.count == 150)
        #expect(reports.allSatisfy { $0.outcome.shortDescription == "delivered" && $0.receiptPending })
        #expect(reports[..<100].allSatisfy { $0.attempts == 2 })
        #expect(reports[100...].allSatisfy { $0.attempts == 1 })
        let sizes = harness.simulator.received(.expoSend).compactMap { request in
            JSONValue.decode(request.body).flatMap { if case .array(let messages) = $0 { messages.count } else { nil } }
        }
        #expect(sizes.sorted() == [50, 100, 100])
        // One back-off for the round, at least Expo's `retry-after: 1`.
        #expect(harness.sleeper.recorded == [.seconds(1)])
        try await harness.close()
    }

    @Test func anEndpointKeepsItsPoolAndMakesNoneItDoesNotUse() async throws {
        let harness = try await Harness()
        let push = try pushes(tokens: [ProviderTestTokens.apns()], provider: .apns)[0]
        #expect(await harness.apns.send(push).outcome.shortDescription == "delivered")
        // The sandbox endpoint made its pool; the production one, never used, made none.
        let credentials = harness.client.statistics.keys.map(\.credential)
        #expect(credentials == ["apns:sandbox:\(harness.credentials.apnsTeamID):\(harness.credentials.apnsKeyID)"])

        // Once the client is shut down, the pool the endpoint kept refuses as the client itself would.
        await harness.client.shutdown()
        let after = await harness.apns.send(push)
        #expect(after.outcome == .unavailable(reason: "transport: shuttingDown", retryAfter: nil))
        #expect(after.attempts == 1)
        try await harness.close()
    }

    @Test func anEndpointWithoutSchemeOrHostIsTheOperatorsConfiguration() async throws {
        let client = HTTP2Client()
        let settings = PayloadSettings(
            apnsTopic: "com.example.app", apnsDefaultEnvironment: .production, fcmProjectId: "p")
        let sender = APNsSender(
            upstream: APNsUpstream(
                configuration: APNsSenderConfiguration(payload: settings, productionEndpoint: "api.push.apple.com"),
                tokens: APNsTokenProvider(teamID: "TEAM123456", keyID: "KEY1234567", key: P256.Signing.PrivateKey()),
                client: client
            ),
            environment: .test(clock: TestClock(), sleeper: RecordingSleeper())
        )
        let report = await sender.send(try pushes(tokens: [ProviderTestTokens.apns()], provider: .apns)[0])
        #expect(report.outcome == .configurationError(reason: "transport: invalidRequest"))
        #expect(report.attempts == 1)
        #expect(client.statistics.isEmpty)
        await client.shutdown()
    }

    @Test func aMessageTooBigIsRefusedWithoutAnAttemptBesideTheOthersOfItsBatch() async throws {
        let harness = try await Harness()
        var big = PushMessage(
            to: [ProviderTestTokens.expo()], title: "Deploy", body: String(repeating: "x", count: 5000))
        big.provider = .expo
        let all = try resolved(big) + (try pushes(tokens: [ProviderTestTokens.expo("0410")], provider: .expo))
        let reports = await harness.expo.send(all)
        #expect(reports.map(\.outcome.errorCode) == ["MessageTooBig", "DeviceNotRegistered"])
        #expect(reports.map(\.attempts) == [0, 1])
        #expect(harness.simulator.received(.expoSend).count == 1)
        try await harness.close()
    }
}
