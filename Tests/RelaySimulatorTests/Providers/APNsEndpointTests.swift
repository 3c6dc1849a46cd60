import Crypto
import Foundation
import HTTP2TestClient
import Testing

@testable import RelaySimulator

@Suite struct APNsEndpointTests {
    // MARK: - Provider tokens

    @Test(.timeLimit(.minutes(1)))
    func validProviderTokenSucceedsAndEchoesTheAPNsID() async throws {
        try await withSimulator { simulator, client, credentials in
            let id = "8f2e1d4c-5b6a-4978-8c9d-0e1f2a3b4c5d"
            let jwt = try apnsProviderToken(credentials)
            let echoed = try await sendAPNs(
                client, credentials,
                headers: apnsHeaders(authorization: "bearer \(jwt)", extra: [("apns-id", id), ("apns-priority", "10")])
            )
            let generated = try await sendAPNs(client, credentials)

            #expect(echoed.status == 200)
            #expect(echoed.header("apns-id") == id)
            #expect(echoed.body.isEmpty)
            #expect(generated.status == 200)
            let generatedID = try #require(generated.header("apns-id"))
            #expect(UUID(uuidString: generatedID) != nil)
            #expect(generatedID == generatedID.lowercased())
            #expect(simulator.received(.apns).map(\.status) == [200, 200])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func missingProviderTokenIsRefused() async throws {
        try await withSimulator { _, client, credentials in
            let response = try await sendAPNs(client, credentials, headers: apnsHeaders(authorization: nil))
            #expect(response.status == 403)
            #expect(try json(response)["reason"] == "MissingProviderToken")
            #expect(response.header("content-type") == "application/json")
            #expect(response.header("apns-id") != nil)
        }
    }

    /// Every way a provider token can be wrong without being expired.
    enum BadToken: String, CaseIterable, Sendable {
        case signedByAnotherKey, unknownKeyID, wrongTeam, derSignature, quotedIssuedAt, hs256, notBearer, garbage
    }

    @Test(.timeLimit(.minutes(1)), arguments: BadToken.allCases)
    func invalidProviderTokensAreRefused(_ bad: BadToken) async throws {
        try await withSimulator { _, client, credentials in
            let now = Int(Date().timeIntervalSince1970)
            let key = credentials.apnsPrivateKey
            let authorization: String
            switch bad {
            case .signedByAnotherKey:
                authorization = try "bearer " + apnsProviderToken(key: P256.Signing.PrivateKey(), keyID: "DEMOKEY001")
            case .unknownKeyID:
                authorization = try "bearer " + apnsProviderToken(key: key, keyID: "UNKNOWN999")
            case .wrongTeam:
                authorization = try "bearer " + apnsProviderToken(key: key, keyID: "DEMOKEY001", teamID: "OTHERTEAM1")
            case .derSignature:
                authorization =
                    try "bearer "
                    + compactJWT(
                        header: #"{"alg":"ES256","kid":"DEMOKEY001"}"#, claims: #"{"iss":"DEMOTEAM01","iat":\#(now)}"#
                    ) {
                        Array(try key.signature(for: $0).derRepresentation)
                    }
            case .quotedIssuedAt:
                authorization =
                    try "bearer "
                    + compactJWT(
                        header: #"{"alg":"ES256","kid":"DEMOKEY001"}"#, claims: #"{"iss":"DEMOTEAM01","iat":"\#(now)"}"#
                    ) {
                        Array(try key.signature(for: $0).rawRepresentation)
                    }
            case .hs256:
                authorization =
                    try "bearer "
                    + compactJWT(
                        header: #"{"alg":"HS256","kid":"DEMOKEY001"}"#, claims: #"{"iss":"DEMOTEAM01","iat":\#(now)}"#
                    ) {
                        Array(try key.signature(for: $0).rawRepresentation)
                    }
            case .notBearer:
                authorization = try "basic " + apnsProviderToken(credentials)
            case .garbage:
                authorization = "bearer not-a-jwt"
            }
            let response = try await sendAPNs(client, credentials, headers: apnsHeaders(authorization: authorization))
            #expect(response.status == 403)
            #expect(try json(response)["reason"] == "InvalidProviderToken")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func providerTokenOlderThanAnHourIsExpired() async throws {
        try await withSimulator { _, client, credentials in
            let old = try apnsProviderToken(credentials, issuedAt: Date() - 3700)
            let recent = try apnsProviderToken(credentials, issuedAt: Date() - 3000)
            let expired = try await sendAPNs(client, credentials, headers: apnsHeaders(authorization: "bearer \(old)"))
            let accepted = try await sendAPNs(
                client, credentials, headers: apnsHeaders(authorization: "bearer \(recent)"))
            #expect(expired.status == 403)
            #expect(try json(expired)["reason"] == "ExpiredProviderToken")
            #expect(accepted.status == 200)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func firstKeyBindsTheConnection() async throws {
        let secondKey = P256.Signing.PrivateKey()
        try await withSimulator { configuration in
            configuration.apns.keys["DEMOKEY002"] = secondKey.publicKey
        } body: { simulator, client, credentials in
            let first = try apnsProviderToken(credentials)
            let second = try apnsProviderToken(key: secondKey, keyID: "DEMOKEY002")
            let bound = try await sendAPNs(client, credentials, headers: apnsHeaders(authorization: "bearer \(first)"))
            let unrelated = try await sendAPNs(
                client, credentials, headers: apnsHeaders(authorization: "bearer \(second)"))
            let sameKeyAgain = try await sendAPNs(
                client, credentials, headers: apnsHeaders(authorization: "bearer \(first)"))

            let otherConnection = try await HTTP2TestClient.connect(
                port: simulator.port, trusting: simulator.caFilePath)
            let secondKeyElsewhere = try await sendAPNs(
                otherConnection, credentials, headers: apnsHeaders(authorization: "bearer \(second)"))
            await otherConnection.close()

            #expect(bound.status == 200)
            #expect(unrelated.status == 403)
            #expect(try json(unrelated)["reason"] == "UnrelatedKeyIdInToken")
            #expect(sameKeyAgain.status == 200)
            #expect(secondKeyElsewhere.status == 200)
            #expect(Set(simulator.received(.apns).map(\.connectionID)).count == 2)
        }
    }

    // MARK: - Topics, push types, priorities

    struct TopicCase: Sendable, CustomTestStringConvertible {
        var pushType: String?
        var topic: String?
        var status: Int
        var reason: String?
        var testDescription: String { "\(self.pushType ?? "-") \(self.topic ?? "-") → \(self.reason ?? "200")" }
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: [
            TopicCase(pushType: "alert", topic: "com.example.oncall", status: 200),
            TopicCase(pushType: nil, topic: "com.example.oncall", status: 200),  // APNs assumes alert
            TopicCase(pushType: "background", topic: "com.example.oncall", status: 200),
            TopicCase(pushType: "voip", topic: "com.example.oncall.voip", status: 200),
            TopicCase(pushType: "location", topic: "com.example.oncall.location-query", status: 200),
            TopicCase(pushType: "complication", topic: "com.example.oncall.complication", status: 200),
            TopicCase(pushType: "fileprovider", topic: "com.example.oncall.pushkit.fileprovider", status: 200),
            TopicCase(pushType: "liveactivity", topic: "com.example.oncall.push-type.liveactivity", status: 200),
            TopicCase(pushType: "pushtotalk", topic: "com.example.oncall.voip-ptt", status: 200),
            TopicCase(pushType: "widgets", topic: "com.example.oncall.push-type.widgets", status: 200),
            TopicCase(pushType: "controls", topic: "com.example.oncall.push-type.controls", status: 200),
            TopicCase(pushType: "voip", topic: "com.example.oncall", status: 400, reason: "DeviceTokenNotForTopic"),
            TopicCase(
                pushType: "alert", topic: "com.example.oncall.voip", status: 400, reason: "DeviceTokenNotForTopic"),
            TopicCase(pushType: "alert", topic: "com.other.app", status: 400, reason: "TopicDisallowed"),
            // A Live Activity push needs the suffix: the bundle ID alone is not its topic.
            TopicCase(
                pushType: "liveactivity", topic: "com.example.oncall", status: 400, reason: "DeviceTokenNotForTopic"),
            TopicCase(
                pushType: "liveactivity", topic: "com.example.oncall.push-type.widgets", status: 400,
                reason: "DeviceTokenNotForTopic"),
            TopicCase(
                pushType: "liveactivity", topic: "com.other.app.push-type.liveactivity", status: 400,
                reason: "TopicDisallowed"),
            TopicCase(pushType: "alert", topic: nil, status: 400, reason: "MissingTopic"),
            TopicCase(pushType: "sms", topic: "com.example.oncall", status: 400, reason: "InvalidPushType"),
        ]
    )
    func topicMustMatchThePushType(_ row: TopicCase) async throws {
        try await withSimulator { _, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            let response = try await sendAPNs(
                client, credentials,
                headers: apnsHeaders(authorization: "bearer \(jwt)", topic: row.topic, pushType: row.pushType)
            )
            #expect(response.status == row.status)
            if let reason = row.reason {
                #expect(try json(response)["reason"]?.stringValue == reason)
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func backgroundPushesRefuseImmediatePriority() async throws {
        try await withSimulator { _, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            func send(_ pushType: String, priority: String) async throws -> HTTP2TestClient.Response {
                try await sendAPNs(
                    client, credentials,
                    headers: apnsHeaders(
                        authorization: "bearer \(jwt)", pushType: pushType, extra: [("apns-priority", priority)]),
                    body: Array(#"{"aps":{"content-available":1}}"#.utf8)
                )
            }
            let background10 = try await send("background", priority: "10")
            let background5 = try await send("background", priority: "5")
            let alert1 = try await send("alert", priority: "1")
            let alert7 = try await send("alert", priority: "7")

            #expect(background10.status == 400)
            #expect(try json(background10)["reason"] == "BadPriority")
            #expect(background5.status == 200)
            #expect(alert1.status == 200)
            #expect(alert7.status == 400)
            #expect(try json(alert7)["reason"] == "BadPriority")
        }
    }

    struct HeaderCase: Sendable, CustomTestStringConvertible {
        var name: String
        var value: String
        var reason: String
        var testDescription: String { "\(self.name): \(self.value) → \(self.reason)" }
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: [
            HeaderCase(name: "apns-id", value: "not-a-uuid", reason: "BadMessageId"),
            HeaderCase(name: "apns-collapse-id", value: String(repeating: "c", count: 65), reason: "BadCollapseId"),
            HeaderCase(name: "apns-expiration", value: "tomorrow", reason: "BadExpirationDate"),
            HeaderCase(name: "apns-expiration", value: "-1", reason: "BadExpirationDate"),
            HeaderCase(name: "apns-topic", value: "com.example.oncall", reason: "DuplicateHeaders"),
        ]
    )
    func malformedHeadersAreRefused(_ row: HeaderCase) async throws {
        try await withSimulator { _, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            let response = try await sendAPNs(
                client, credentials,
                headers: apnsHeaders(authorization: "bearer \(jwt)", extra: [(row.name, row.value)])
            )
            #expect(response.status == 400)
            #expect(try json(response)["reason"]?.stringValue == row.reason)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func acceptableOptionalHeadersPass() async throws {
        try await withSimulator { _, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            let response = try await sendAPNs(
                client, credentials,
                headers: apnsHeaders(
                    authorization: "bearer \(jwt)",
                    extra: [("apns-collapse-id", String(repeating: "c", count: 64)), ("apns-expiration", "0")]
                )
            )
            #expect(response.status == 200)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func deviceTokensMustBeEvenLengthHex() async throws {
        try await withSimulator { _, client, credentials in
            let odd = try await sendAPNs(client, credentials, token: "abc")
            let notHex = try await sendAPNs(client, credentials, token: "zz" + String(repeating: "00", count: 31))
            let upper = try await sendAPNs(client, credentials, token: String(repeating: "AB", count: 32))
            let missing = try await sendAPNs(client, credentials, token: "")
            #expect(odd.status == 400)
            #expect(try json(odd)["reason"] == "BadDeviceToken")
            #expect(notHex.status == 400)
            #expect(try json(notHex)["reason"] == "BadDeviceToken")
            #expect(upper.status == 200)
            #expect(missing.status == 400)
            #expect(try json(missing)["reason"] == "MissingDeviceToken")
        }
    }

    // MARK: - Payloads

    @Test(.timeLimit(.minutes(1)))
    func payloadLimitsAre4096And5120ForVoIP() async throws {
        try await withSimulator { _, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            let alert = apnsHeaders(authorization: "bearer \(jwt)")
            let voip = apnsHeaders(authorization: "bearer \(jwt)", topic: "com.example.oncall.voip", pushType: "voip")

            let alertAtLimit = try await sendAPNs(client, credentials, headers: alert, body: apnsPayload(size: 4096))
            let alertOver = try await sendAPNs(client, credentials, headers: alert, body: apnsPayload(size: 4097))
            let voipAtLimit = try await sendAPNs(client, credentials, headers: voip, body: apnsPayload(size: 5120))
            let voipOver = try await sendAPNs(client, credentials, headers: voip, body: apnsPayload(size: 5121))

            #expect(alertAtLimit.status == 200)
            #expect(alertOver.status == 413)
            #expect(try json(alertOver)["reason"] == "PayloadTooLarge")
            #expect(voipAtLimit.status == 200)
            #expect(voipOver.status == 413)
            #expect(try json(voipOver)["reason"] == "PayloadTooLarge")
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: ["", "not json", "[1,2]", #"{"alert":"hi"}"#, #"{"aps":"hi"}"#])
    func payloadMustBeAnObjectWithAps(_ body: String) async throws {
        try await withSimulator { _, client, credentials in
            let response = try await sendAPNs(client, credentials, body: Array(body.utf8))
            #expect(response.status == 400)
            #expect(try json(response)["reason"] == "PayloadEmpty")
        }
    }

    // MARK: - Paths

    @Test(.timeLimit(.minutes(1)))
    func wrongMethodAndPathAreRefused() async throws {
        try await withSimulator { simulator, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            let get = try await client.request(
                method: "GET", path: "/3/device/abcd", headers: apnsHeaders(authorization: "bearer \(jwt)"))
            let badPath = try await client.request(
                path: "/3/devices/abcd", headers: apnsHeaders(authorization: "bearer \(jwt)"), body: alertPayload)
            #expect(get.status == 405)
            #expect(try json(get)["reason"] == "MethodNotAllowed")
            #expect(badPath.status == 404)
            #expect(try json(badPath)["reason"] == "BadPath")
            #expect(simulator.received(.apns).count == 2)
        }
    }
}
