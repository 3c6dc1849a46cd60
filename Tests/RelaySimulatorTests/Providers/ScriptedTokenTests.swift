import Foundation
import HTTP2TestClient
import Testing

@testable import RelaySimulator

/// Every scripted code against every provider: three attempts with the same token, each summarised as
/// `"<status> <what>"`, where `<what>` is the APNs reason, the FCM `errorCode` (or `status` without an `FcmError`),
/// or the Expo request error code or first ticket's error (`ok` for success).
@Suite struct ScriptedTokenTests {
    static let apnsExpectations: [ScriptedToken: [String]] = [
        .dead: ["410 Unregistered", "410 Unregistered", "410 Unregistered"],
        .invalid: ["400 BadDeviceToken", "400 BadDeviceToken", "400 BadDeviceToken"],
        .wrongSender: ["400 DeviceTokenNotForTopic", "400 DeviceTokenNotForTopic", "400 DeviceTokenNotForTopic"],
        .tooBig: ["413 PayloadTooLarge", "413 PayloadTooLarge", "413 PayloadTooLarge"],
        .flaky: ["503 ServiceUnavailable", "503 ServiceUnavailable", "200 ok"],
        .throttledOnce: ["429 TooManyRequests", "200 ok", "200 ok"],
        .broken: ["500 InternalServerError", "500 InternalServerError", "500 InternalServerError"],
        .credentialExpiredOnce: ["403 ExpiredProviderToken", "200 ok", "200 ok"],
        .slow: ["200 ok", "200 ok", "200 ok"],
        .receiptDead: ["200 ok", "200 ok", "200 ok"],
        .badCredentials: ["403 InvalidProviderToken", "403 InvalidProviderToken", "403 InvalidProviderToken"],
    ]

    static let fcmExpectations: [ScriptedToken: [String]] = [
        .dead: ["404 UNREGISTERED", "404 UNREGISTERED", "404 UNREGISTERED"],
        .invalid: ["400 INVALID_ARGUMENT", "400 INVALID_ARGUMENT", "400 INVALID_ARGUMENT"],
        .wrongSender: ["403 SENDER_ID_MISMATCH", "403 SENDER_ID_MISMATCH", "403 SENDER_ID_MISMATCH"],
        .tooBig: ["400 INVALID_ARGUMENT", "400 INVALID_ARGUMENT", "400 INVALID_ARGUMENT"],
        .flaky: ["503 UNAVAILABLE", "503 UNAVAILABLE", "200 ok"],
        .throttledOnce: ["429 QUOTA_EXCEEDED", "200 ok", "200 ok"],
        .broken: ["500 INTERNAL", "500 INTERNAL", "500 INTERNAL"],
        .credentialExpiredOnce: ["401 UNAUTHENTICATED", "200 ok", "200 ok"],
        .slow: ["200 ok", "200 ok", "200 ok"],
        .receiptDead: ["200 ok", "200 ok", "200 ok"],
        .badCredentials: ["401 THIRD_PARTY_AUTH_ERROR", "401 THIRD_PARTY_AUTH_ERROR", "401 THIRD_PARTY_AUTH_ERROR"],
    ]

    static let expoExpectations: [ScriptedToken: [String]] = [
        .dead: ["200 DeviceNotRegistered", "200 DeviceNotRegistered", "200 DeviceNotRegistered"],
        .invalid: ["200 DeviceNotRegistered", "200 DeviceNotRegistered", "200 DeviceNotRegistered"],
        .wrongSender: ["200 MismatchSenderId", "200 MismatchSenderId", "200 MismatchSenderId"],
        .tooBig: ["200 MessageTooBig", "200 MessageTooBig", "200 MessageTooBig"],
        .flaky: ["503 INTERNAL_SERVER_ERROR", "503 INTERNAL_SERVER_ERROR", "200 ok"],
        .throttledOnce: ["429 TOO_MANY_REQUESTS", "200 ok", "200 ok"],
        .broken: ["500 INTERNAL_SERVER_ERROR", "500 INTERNAL_SERVER_ERROR", "500 INTERNAL_SERVER_ERROR"],
        .credentialExpiredOnce: ["200 ok", "200 ok", "200 ok"],
        .slow: ["200 ok", "200 ok", "200 ok"],
        .receiptDead: ["200 ok", "200 ok", "200 ok"],
        .badCredentials: ["200 ok", "200 ok", "200 ok"],
    ]

    /// Scripts under test run fast: `0555` gets its own test.
    static func fast(_ configuration: inout ProviderSimulator.Configuration) {
        configuration.slowLatency = .milliseconds(1)
    }

    static func apnsToken(_ script: ScriptedToken) -> String {
        script.rawValue + String(repeating: "0a", count: 30)
    }

    // MARK: - Per provider

    @Test(.timeLimit(.minutes(1)), arguments: ScriptedToken.allCases)
    func apnsFollowsTheScript(_ script: ScriptedToken) async throws {
        try await withSimulator(Self.fast) { simulator, client, credentials in
            var outcomes: [String] = []
            for _ in 0..<3 {
                let response = try await sendAPNs(client, credentials, token: Self.apnsToken(script))
                let reason = response.status == 200 ? "ok" : try json(response)["reason"]?.stringValue ?? "?"
                outcomes.append("\(response.status) \(reason)")
                if response.status == 429 {
                    #expect(response.header("retry-after") == "1")
                }
                if response.status == 410 {
                    let timestamp = try #require(try json(response)["timestamp"]?.numberValue)
                    #expect(abs(timestamp / 1000 - Date().timeIntervalSince1970) < 60)
                } else if response.status != 200 {
                    #expect(try json(response)["timestamp"] == nil)
                }
            }
            #expect(outcomes == Self.apnsExpectations[script])
            #expect(simulator.received(.apns).map(\.status) == outcomes.compactMap { Int($0.prefix(3)) })
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: ScriptedToken.allCases)
    func fcmFollowsTheScript(_ script: ScriptedToken) async throws {
        try await withSimulator(Self.fast) { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let token = script.rawValue + ":APA91bSimulatedRegistrationToken"
            var outcomes: [String] = []
            for _ in 0..<3 {
                let response = try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: token))
                let body = try json(response)
                let what =
                    response.status == 200 ? "ok" : fcmErrorCode(body) ?? body["error"]?["status"]?.stringValue ?? "?"
                outcomes.append("\(response.status) \(what)")
                if response.status == 429 {
                    #expect(response.header("retry-after") == "1")
                    #expect(body["error"]?["status"] == "RESOURCE_EXHAUSTED")
                }
                if script == .credentialExpiredOnce && response.status == 401 {
                    // An expired access token is a plain UNAUTHENTICATED; THIRD_PARTY_AUTH_ERROR (`0407`) has details.
                    #expect(body["error"]?["details"] == nil)
                }
                if script == .invalid {
                    #expect(body["error"]?["message"] == "The registration token is not a valid FCM registration token")
                }
                if script == .tooBig {
                    #expect(body["error"]?["message"] == "Message is too big")
                }
            }
            #expect(outcomes == Self.fcmExpectations[script])
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: ScriptedToken.allCases)
    func expoFollowsTheScript(_ script: ScriptedToken) async throws {
        try await withSimulator(Self.fast) { simulator, client, _ in
            let to = "ExponentPushToken[\(script.rawValue)scripted]"
            var outcomes: [String] = []
            for _ in 0..<3 {
                let response = try await sendExpo(client, body: #"[{"to":"\#(to)","title":"t"}]"#)
                let body = try json(response)
                let what: String
                if response.status == 200 {
                    let ticket = try #require(body["data"]?[0])
                    what = ticket["status"] == "ok" ? "ok" : ticket["details"]?["error"]?.stringValue ?? "?"
                    if ticket["status"] == "error" {
                        #expect(ticket["details"]?["expoPushToken"]?.stringValue == to)
                    }
                } else {
                    what = body["errors"]?[0]?["code"]?.stringValue ?? "?"
                    #expect(
                        body["errors"]?[0]?["isTransient"] == (response.status >= 500 ? SimulatorJSON.bool(true) : nil))
                }
                outcomes.append("\(response.status) \(what)")
                if response.status == 429 {
                    #expect(response.header("retry-after") == "1")
                }
            }
            #expect(outcomes == Self.expoExpectations[script])
            #expect(simulator.received(.expoSend).count == 3)
        }
    }

    // MARK: - Counters and timing

    @Test(.timeLimit(.minutes(1)))
    func countersArePerProviderAndExactToken() async throws {
        try await withSimulator { simulator, client, credentials in
            let first = "0429" + String(repeating: "01", count: 30)
            let second = "0429" + String(repeating: "02", count: 30)
            let accessToken = try await fcmAccessToken(client, simulator, credentials)

            let statuses = [
                try await sendAPNs(client, credentials, token: first).status,
                try await sendAPNs(client, credentials, token: second).status,
                try await sendAPNs(client, credentials, token: first).status,
                // The same string as an FCM token has its own counter.
                try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: first)).status,
                try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: first)).status,
            ]
            #expect(statuses == [429, 429, 200, 429, 200])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func unauthenticatedRequestsDoNotUseUpTheScript() async throws {
        try await withSimulator { _, client, credentials in
            let token = "0503" + String(repeating: "ab", count: 30)
            let refused = try await sendAPNs(
                client, credentials, token: token, headers: apnsHeaders(authorization: nil))
            let statuses = [
                refused.status,
                try await sendAPNs(client, credentials, token: token).status,
                try await sendAPNs(client, credentials, token: token).status,
                try await sendAPNs(client, credentials, token: token).status,
            ]
            #expect(statuses == [403, 503, 503, 200])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func slowTokensAnswerAfterSlowLatency() async throws {
        let slowLatency = Duration.milliseconds(800)
        try await withSimulator { configuration in
            configuration.slowLatency = slowLatency
        } body: { simulator, client, credentials in
            let clock = ContinuousClock()
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let start = clock.now
            let apns = try await sendAPNs(client, credentials, token: "0555" + String(repeating: "cd", count: 30))
            let apnsElapsed = clock.now - start
            let fcm = try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: "0555slow"))
            let fcmElapsed = clock.now - start - apnsElapsed
            let expo = try await sendExpo(client, body: #"{"to":"ExponentPushToken[0555slow]"}"#)
            let expoElapsed = clock.now - start - apnsElapsed - fcmElapsed
            // No upper bound on an ordinary token's time: a wall-clock ceiling fails on a loaded machine.
            let fast = try await sendAPNs(client, credentials)

            #expect([apns.status, fcm.status, expo.status, fast.status] as [Int] == [200, 200, 200, 200])
            #expect(apnsElapsed >= slowLatency)
            #expect(fcmElapsed >= slowLatency)
            #expect(expoElapsed >= slowLatency)
        }
    }

    // MARK: - Pure

    @Test func scriptIsChosenByTheFirstFourCharacters() {
        #expect(ScriptedToken(token: "0410abcdef") == .dead)
        #expect(ScriptedToken(token: "0610") == .receiptDead)
        #expect(ScriptedToken(token: "041") == nil)
        #expect(ScriptedToken(token: "abcd0410") == nil)
        #expect(ScriptedToken(token: "") == nil)
    }

    @Test func attemptsAreCountedOnlyForScriptsThatNeedThem() {
        var state = ProviderSimulator.State()
        let faults = (0..<3).map { _ in state.scriptedFault(provider: .apns, token: "0503x") }
        #expect(faults == [.serviceUnavailable, .serviceUnavailable, nil])
        #expect(state.scriptedFault(provider: .apns, token: "0500x") == .internalError)
        #expect(state.scriptedFault(provider: .apns, token: "0410x") == nil)
        #expect(state.scriptedFault(provider: .apns, token: "plain") == nil)
        #expect(state.attempts.count == 1)
    }
}
