import Foundation
import HTTP2TestClient
import Testing
import _CryptoExtras

@testable import RelaySimulator

@Suite struct FCMEndpointTests {
    // MARK: - OAuth token endpoint

    @Test(.timeLimit(.minutes(1)))
    func assertionIsExchangedForAnAccessTokenThatSends() async throws {
        try await withSimulator { simulator, client, credentials in
            let assertion = try googleAssertion(credentials, audience: simulator.fcmTokenURI)
            let grant = try await client.request(
                path: "/token",
                headers: [("content-type", "application/x-www-form-urlencoded")],
                body: tokenRequestBody(assertion: assertion)
            )
            let body = try json(grant)
            #expect(grant.status == 200)
            #expect(body["expires_in"] == 3599)
            #expect(body["token_type"] == "Bearer")
            let accessToken = try #require(body["access_token"]?.stringValue)
            #expect(!accessToken.isEmpty)

            let sent = try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: "abc123"))
            #expect(sent.status == 200)
            let name = try #require(try json(sent)["name"]?.stringValue)
            #expect(name.hasPrefix("projects/demo-project/messages/"))
            #expect(simulator.received().map(\.provider) == [.fcmToken, .fcm])
        }
    }

    enum BadAssertion: String, CaseIterable, Sendable {
        case signedByAnotherKey, wrongIssuer, wrongAudience, missingScope, tooLong, expired, issuedInTheFuture
        case wrongGrantType, notAJWT
    }

    @Test(.timeLimit(.minutes(1)), arguments: BadAssertion.allCases)
    func badAssertionsAreRefused(_ bad: BadAssertion) async throws {
        try await withSimulator { simulator, client, credentials in
            let audience = simulator.fcmTokenURI
            let now = Date()
            var grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
            let assertion: String
            switch bad {
            case .signedByAnotherKey:
                let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
                assertion = try googleAssertion(credentials, audience: audience, key: otherKey)
            case .wrongIssuer:
                assertion = try googleAssertion(
                    credentials, audience: audience, issuer: "other@x.iam.gserviceaccount.com")
            case .wrongAudience:
                assertion = try googleAssertion(credentials, audience: "https://oauth2.googleapis.com/token")
            case .missingScope:
                assertion = try googleAssertion(
                    credentials, audience: audience, scope: "https://www.googleapis.com/auth/cloud-platform")
            case .tooLong: assertion = try googleAssertion(credentials, audience: audience, lifetime: 3601)
            case .expired: assertion = try googleAssertion(credentials, audience: audience, issuedAt: now - 4000)
            case .issuedInTheFuture:
                assertion = try googleAssertion(credentials, audience: audience, issuedAt: now + 600)
            case .wrongGrantType:
                assertion = try googleAssertion(credentials, audience: audience)
                grantType = "client_credentials"
            case .notAJWT: assertion = "not.a.jwt"
            }
            let response = try await client.request(
                path: "/token",
                headers: [("content-type", "application/x-www-form-urlencoded")],
                body: tokenRequestBody(assertion: assertion, grantType: grantType)
            )
            let body = try json(response)
            #expect(response.status == 400)
            #expect(body["error"]?.stringValue == (bad == .wrongGrantType ? "unsupported_grant_type" : "invalid_grant"))
            #expect(body["error_description"]?.stringValue?.isEmpty == false)
            #expect(body["access_token"] == nil)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func scopeMayListSeveralScopes() async throws {
        try await withSimulator { simulator, client, credentials in
            let assertion = try googleAssertion(
                credentials,
                audience: simulator.fcmTokenURI,
                scope:
                    "https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/firebase.messaging"
            )
            let response = try await client.request(path: "/token", body: tokenRequestBody(assertion: assertion))
            #expect(response.status == 200)
        }
    }

    // MARK: - Send: credentials and project

    @Test(.timeLimit(.minutes(1)))
    func sendWithoutAValidAccessTokenIsUnauthenticated() async throws {
        try await withSimulator { _, client, _ in
            let missing = try await sendFCM(client, accessToken: nil, body: fcmMessage(token: "abc"))
            let unknown = try await sendFCM(client, accessToken: "ya29.made-up", body: fcmMessage(token: "abc"))
            for response in [missing, unknown] {
                let body = try json(response)
                #expect(response.status == 401)
                #expect(body["error"]?["code"] == 401)
                #expect(body["error"]?["status"] == "UNAUTHENTICATED")
                #expect(body["error"]?["details"] == nil)  // the "refresh your token" 401 has no FcmError
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func anotherProjectIsPermissionDenied() async throws {
        try await withSimulator { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let response = try await sendFCM(
                client, accessToken: accessToken, body: fcmMessage(token: "abc"), project: "other-project")
            let body = try json(response)
            #expect(response.status == 403)
            #expect(body["error"]?["status"] == "PERMISSION_DENIED")
            #expect(fcmErrorCode(body) == nil)
        }
    }

    // MARK: - Send: message rules

    struct MessageCase: Sendable, CustomTestStringConvertible {
        var name: String
        var body: String
        var testDescription: String { self.name }
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: [
            MessageCase(name: "data value not a string", body: #"{"message":{"token":"abc","data":{"count":3}}}"#),
            MessageCase(name: "data value boolean", body: #"{"message":{"token":"abc","data":{"on":true}}}"#),
            MessageCase(name: "data value null", body: #"{"message":{"token":"abc","data":{"badge":null}}}"#),
            MessageCase(name: "data value object", body: #"{"message":{"token":"abc","data":{"aps":{"badge":1}}}}"#),
            MessageCase(
                name: "android data value not a string",
                body: #"{"message":{"token":"abc","android":{"data":{"badge":0}}}}"#),
            MessageCase(name: "reserved data key", body: #"{"message":{"token":"abc","data":{"from":"me"}}}"#),
            MessageCase(name: "no target", body: #"{"message":{"data":{"a":"b"}}}"#),
            MessageCase(name: "two targets", body: #"{"message":{"token":"abc","topic":"news"}}"#),
            MessageCase(name: "topic with prefix", body: #"{"message":{"topic":"/topics/news"}}"#),
            MessageCase(name: "priority", body: #"{"message":{"token":"abc","android":{"priority":"URGENT"}}}"#),
            MessageCase(
                name: "lowercase priority", body: #"{"message":{"token":"abc","android":{"priority":"high"}}}"#),
            MessageCase(name: "ttl without unit", body: #"{"message":{"token":"abc","android":{"ttl":"3600"}}}"#),
            MessageCase(name: "ttl as number", body: #"{"message":{"token":"abc","android":{"ttl":3600}}}"#),
            MessageCase(name: "ttl over 4 weeks", body: #"{"message":{"token":"abc","android":{"ttl":"2419201s"}}}"#),
            MessageCase(name: "unknown message field", body: #"{"message":{"token":"abc","priority":"high"}}"#),
            MessageCase(name: "unknown top-level field", body: #"{"message":{"token":"abc"},"dry_run":true}"#),
            MessageCase(name: "no message", body: #"{"token":"abc"}"#),
            MessageCase(name: "not JSON", body: "message=abc"),
            MessageCase(
                name: "too big",
                body: #"{"message":{"token":"abc","data":{"blob":"\#(String(repeating: "x", count: 4100))"}}}"#),
        ]
    )
    func invalidMessagesAreInvalidArgument(_ row: MessageCase) async throws {
        try await withSimulator { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let response = try await sendFCM(client, accessToken: accessToken, body: row.body)
            let body = try json(response)
            #expect(response.status == 400)
            #expect(body["error"]?["code"] == 400)
            #expect(body["error"]?["status"] == "INVALID_ARGUMENT")
            #expect(fcmErrorCode(body) == "INVALID_ARGUMENT")
            #expect(body["error"]?["message"]?.stringValue?.isEmpty == false)
        }
    }

    /// `android.notification` members of the wrong type or unknown, and `android.direct_boot_ok` not a boolean.
    @Test(
        .timeLimit(.minutes(1)),
        arguments: [
            #"{"click_action":1}"#, #"{"clickAction":["a"]}"#, #"{"notification_count":"three"}"#,
            #"{"notification_count":1.5}"#, #"{"notificationCount":4294967296}"#, #"{"visibility":"private"}"#,
            #"{"visibility":true}"#, #"{"notification_priority":"HIGH"}"#, #"{"notificationPriority":"high"}"#,
            #"{"color":"red"}"#, ##"{"color":"#fff"}"##, ##"{"color":"#12345g"}"##, #"{"title_loc_args":"x"}"#,
            #"{"titleLocArgs":[1]}"#, #"{"body_loc_args":[null]}"#, #"{"body_loc_key":7}"#, #"{"sound":false}"#,
            #"{"channel_id":{}}"#, #"{"sticky":"true"}"#, #"{"badge":"3"}"#, #"{"notification_count_":1}"#, "[]",
        ]
    )
    func badAndroidNotificationsAreInvalidArgument(_ notification: String) async throws {
        try await withSimulator { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let response = try await sendFCM(
                client, accessToken: accessToken,
                body: #"{"message":{"token":"abc","android":{"notification":\#(notification)}}}"#)
            let body = try json(response)
            #expect(response.status == 400, "\(notification)")
            #expect(body["error"]?["status"] == "INVALID_ARGUMENT")
            #expect(fcmErrorCode(body) == "INVALID_ARGUMENT")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func directBootOKMustBeABoolean() async throws {
        try await withSimulator { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let string = try await sendFCM(
                client, accessToken: accessToken, body: #"{"message":{"token":"abc","android":{"direct_boot_ok":"1"}}}"#
            )
            let boolean = try await sendFCM(
                client, accessToken: accessToken, body: #"{"message":{"token":"abc","android":{"directBootOk":true}}}"#)
            #expect(string.status == 400)
            #expect(fcmErrorCode(try json(string)) == "INVALID_ARGUMENT")
            #expect(boolean.status == 200)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func androidNotificationsOfEveryFieldTheRelaySendsSucceed() async throws {
        try await withSimulator { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let snakeCase = """
                {"message":{"token":"abc","android":{"priority":"HIGH","direct_boot_ok":true,"notification":{\
                "title":"t","body":"b","channel_id":"oncall","sound":"default","icon":"ic","tag":"incident-12",\
                "image":"https://example.com/i.png","click_action":"FLUTTER_NOTIFICATION_CLICK",\
                "notification_count":3,"visibility":"PRIVATE","color":"#1A2b3C","notification_priority":"PRIORITY_MAX",\
                "title_loc_key":"T","title_loc_args":["a","b"],"body_loc_key":"B","body_loc_args":[]}}}}
                """
            let camelCase = """
                {"message":{"token":"abc","android":{"notification":{"clickAction":"OPEN","notificationCount":"0",\
                "visibility":"SECRET","notificationPriority":"PRIORITY_MIN","titleLocArgs":["x"],"defaultSound":true,\
                "lightSettings":{}}}}}
                """
            for body in [snakeCase, camelCase] {
                let response = try await sendFCM(client, accessToken: accessToken, body: body)
                #expect(response.status == 200, "\(body) → \(response.bodyText)")
            }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func validMessagesOfEveryTargetSucceed() async throws {
        try await withSimulator { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let bodies = [
                fcmMessage(token: "abc"),
                #"{"message":{"topic":"news","notification":{"title":"t","body":"b"}}}"#,
                #"{"message":{"condition":"'a' in topics","android":{"ttl":"0.5s","priority":"NORMAL"}}}"#,
                #"{"validateOnly":false,"message":{"token":"abc","apns":{"headers":{"apns-priority":"5"},"payload":{"aps":{}}}}}"#,
            ]
            for body in bodies {
                let response = try await sendFCM(client, accessToken: accessToken, body: body)
                #expect(response.status == 200, "\(body) → \(response.bodyText)")
            }
            let dryRun = try await sendFCM(
                client, accessToken: accessToken, body: #"{"validate_only":true,"message":{"token":"abc"}}"#)
            #expect(try json(dryRun)["name"] == "projects/demo-project/messages/fake_message_id")
        }
    }
}
