import Foundation
import HTTP2TestClient
import Testing

@testable import RelaySimulator

/// ``ProviderSimulator/lastPayload(for:)``, `GET /simulator/last-payload/<token>` and their bounded store.
@Suite struct LastPayloadTests {
    @Test(.timeLimit(.minutes(1)))
    func apnsKeepsTheLastAcceptedBodyAndHeaders() async throws {
        try await withSimulator { simulator, client, credentials in
            let token = String(repeating: "ab", count: 32)
            let jwt = try apnsProviderToken(credentials)
            _ = try await sendAPNs(client, credentials, token: token)
            let badge = Array(#"{"aps":{"badge":0}}"#.utf8)
            let cleared = try await sendAPNs(
                client, credentials, token: token,
                headers: apnsHeaders(authorization: "bearer \(jwt)", extra: [("apns-priority", "5")]), body: badge)
            // Refused: the last payload stays the badge clear.
            let refused = try await sendAPNs(
                client, credentials, token: token,
                headers: apnsHeaders(authorization: "bearer \(jwt)", extra: [("apns-priority", "7")]))

            #expect(cleared.status == 200)
            #expect(refused.status == 400)
            let payload = try #require(simulator.lastPayload(for: token))
            #expect(payload.provider == .apns)
            #expect(payload.body == badge)
            #expect(
                payload.headers == [
                    "apns-push-type": "alert", "apns-priority": "5", "apns-topic": "com.example.oncall",
                ])
            #expect(payload.ignoredByDevice == nil)
            #expect(simulator.lastPayload(for: token.uppercased()) == payload)  // hex, either case
            let other = String(repeating: "cd", count: 32)
            #expect(simulator.lastPayload(for: other) == nil)
            _ = try await sendAPNs(client, credentials, token: other.uppercased())
            #expect(simulator.lastPayload(for: other)?.body == alertPayload)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func payloadsAreKeptWhenRecordingIsOffAndShowIgnoredPushes() async throws {
        try await withSimulator { configuration in
            configuration.recordsRequests = false
        } body: { simulator, client, credentials in
            let token = String(repeating: "0f", count: 32)
            let jwt = try apnsProviderToken(credentials)
            let body = Array(#"{"aps":{"event":"end","content-state":{}}}"#.utf8)
            let response = try await sendAPNs(
                client, credentials, token: token,
                headers: apnsHeaders(
                    authorization: "bearer \(jwt)", topic: "com.example.oncall.push-type.liveactivity",
                    pushType: "liveactivity"),
                body: body)

            #expect(response.status == 200)
            #expect(simulator.received().isEmpty)
            let payload = try #require(simulator.lastPayload(for: token))
            #expect(payload.body == body)
            #expect(payload.headers["apns-priority"] == nil)  // not sent, so not shown
            #expect(payload.headers["apns-push-type"] == "liveactivity")
            #expect(payload.ignoredByDevice == "liveactivity without timestamp")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func fcmKeepsTheMessageObject() async throws {
        try await withSimulator { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let token = "fcm-token:APA91b"
            let sent = try await sendFCM(
                client, accessToken: accessToken,
                body: #"{"message":{"token":"\#(token)","data":{"badge":"0"},"android":{"priority":"NORMAL"}}}"#)
            let dryRun = try await sendFCM(
                client, accessToken: accessToken,
                body: #"{"validate_only":true,"message":{"token":"\#(token)","data":{"dry":"run"}}}"#)
            let invalid = try await sendFCM(
                client, accessToken: accessToken, body: #"{"message":{"token":"\#(token)","data":{"badge":0}}}"#)
            let topic = try await sendFCM(
                client, accessToken: accessToken, body: #"{"message":{"topic":"news","data":{"a":"b"}}}"#)

            #expect([sent.status, dryRun.status, invalid.status, topic.status] as [Int] == [200, 200, 400, 200])
            let payload = try #require(simulator.lastPayload(for: token))
            #expect(payload.provider == .fcm)
            #expect(payload.headers.isEmpty)
            #expect(
                payload.json == [
                    "android": ["priority": "NORMAL"], "data": ["badge": "0"], "token": .string(token),
                ])
            #expect(simulator.lastPayload(for: "news") == nil)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func expoKeepsTheMessageOfEachOkTicket() async throws {
        try await withSimulator { simulator, client, _ in
            let body = """
                [{"to":["ExponentPushToken[first]","not-a-token"],"badge":0},
                 {"to":"ExponentPushToken[0410dead]","title":"gone"},
                 {"to":"ExponentPushToken[first]","data":{"incidentId":"12"}}]
                """
            let response = try await sendExpo(client, body: body)

            #expect(response.status == 200)
            let payload = try #require(simulator.lastPayload(for: "ExponentPushToken[first]"))
            #expect(payload.provider == .expoSend)
            #expect(payload.json == ["data": ["incidentId": "12"], "to": "ExponentPushToken[first]"])
            #expect(simulator.lastPayload(for: "not-a-token") == nil)
            #expect(simulator.lastPayload(for: "ExponentPushToken[0410dead]") == nil)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func getAnswersTheLastPayloadAsJSON() async throws {
        try await withSimulator { simulator, client, credentials in
            let token = String(repeating: "ab", count: 32)
            _ = try await sendAPNs(client, credentials, token: token)
            _ = try await sendExpo(client, body: #"{"to":"ExponentPushToken[abc]","sound":"default"}"#)

            let apns = try await client.request(method: "GET", path: "/simulator/last-payload/\(token.uppercased())")
            let expo = try await client.request(
                method: "GET", path: "/simulator/last-payload/ExponentPushToken%5Babc%5D")
            let unknown = try await client.request(method: "GET", path: "/simulator/last-payload/cdcd")
            let post = try await client.request(path: "/simulator/last-payload/\(token)", body: [1])

            #expect(apns.status == 200)
            #expect(apns.header("content-type") == "application/json")
            let document = try json(apns)
            #expect(document.keys == ["body", "headers", "provider"])  // parsing sorts the keys
            #expect(document["provider"] == "apns")
            #expect(document["headers"] == ["apns-push-type": "alert", "apns-topic": "com.example.oncall"])
            #expect(
                document["body"] == ["aps": ["alert": ["body": "Primary DB unreachable", "title": "Incident #12"]]])
            #expect(expo.status == 200)
            #expect(try json(expo)["body"] == ["sound": "default", "to": "ExponentPushToken[abc]"])
            #expect(try json(expo)["provider"] == "expoSend")
            #expect(unknown.status == 404)
            #expect(post.status == 405)
            // The simulator's own route is not a provider request.
            #expect(simulator.received().map(\.provider) == [.apns, .expoSend])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func theLimitForgetsTheTokenSentToLeastRecently() async throws {
        try await withSimulator { configuration in
            configuration.lastPayloadLimit = 2
        } body: { simulator, client, credentials in
            let tokens = ["aa", "bb", "cc"].map { String(repeating: $0, count: 32) }
            _ = try await sendAPNs(client, credentials, token: tokens[0])
            _ = try await sendAPNs(client, credentials, token: tokens[1])
            _ = try await sendAPNs(client, credentials, token: tokens[0])
            _ = try await sendAPNs(client, credentials, token: tokens[2])

            #expect(simulator.lastPayload(for: tokens[0]) != nil)
            #expect(simulator.lastPayload(for: tokens[1]) == nil)
            #expect(simulator.lastPayload(for: tokens[2]) != nil)
        }
    }

    // MARK: - The bounded store

    static func payload(_ text: String) -> SimulatedPayload {
        SimulatedPayload(provider: .apns, body: Array(text.utf8))
    }

    @Test func storeEvictsByLeastRecentUpdate() {
        var store = LastPayloads(limit: 2)
        store.record(Self.payload("a1"), for: "a")
        store.record(Self.payload("b1"), for: "b")
        for round in 2...10 {
            store.record(Self.payload("a\(round)"), for: "a")  // leaves stale places in the order
        }
        #expect(store.positions <= 4)
        store.record(Self.payload("c1"), for: "c")

        #expect(store.count == 2)
        #expect(store.payload(for: "a")?.bodyText == "a10")
        #expect(store.payload(for: "b") == nil)
        #expect(store.payload(for: "c")?.bodyText == "c1")

        store.record(Self.payload("d1"), for: "d")
        #expect(store.payload(for: "a") == nil)
        #expect(store.payload(for: "c") != nil && store.payload(for: "d") != nil)
    }

    @Test func storeSurvivesManyUpdatesOfFewTokens() {
        var store = LastPayloads(limit: 3)
        for round in 0..<10_000 {
            store.record(Self.payload("\(round)"), for: "t\(round % 4)")
            #expect(store.positions <= 6, "memory in proportion to the limit")
        }
        // The last three tokens updated are kept, each with its latest payload.
        #expect(store.count == 3)
        #expect(store.payload(for: "t3")?.bodyText == "9999")
        #expect(store.payload(for: "t2")?.bodyText == "9998")
        #expect(store.payload(for: "t1")?.bodyText == "9997")
        #expect(store.payload(for: "t0") == nil)
    }

    @Test func storeStaysBoundedWithManyTokens() {
        var store = LastPayloads(limit: 3)
        for round in 0..<10_000 {
            store.record(Self.payload("\(round)"), for: "t\(round)")
            #expect(store.positions <= 6, "memory in proportion to the limit")
        }
        #expect(store.count == 3)
        #expect(store.payload(for: "t9997")?.bodyText == "9997")
        #expect(store.payload(for: "t9996") == nil)
    }

    @Test func zeroLimitKeepsNothing() {
        var store = LastPayloads(limit: 0)
        store.record(Self.payload("x"), for: "a")
        #expect(store.count == 0)
        #expect(store.payload(for: "a") == nil)
    }

    @Test func documentNamesProviderHeadersAndBody() {
        let payload = SimulatedPayload(
            provider: .apns, headers: ["apns-topic": "t", "apns-push-type": "alert"], body: Array(#"{"aps":{}}"#.utf8),
            ignoredByDevice: "liveactivity without event")
        #expect(
            payload.document.text
                == #"{"provider":"apns","headers":{"apns-push-type":"alert","apns-topic":"t"},"body":{"aps":{}},"#
                + #""ignoredByDevice":"liveactivity without event"}"#)
    }
}
