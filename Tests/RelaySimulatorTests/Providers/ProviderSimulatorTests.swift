import Crypto
import Foundation
import HTTP2TestClient
import NIOCore
import Testing
import _CryptoExtras

@testable import RelaySimulator

@Suite struct ProviderSimulatorTests {
    @Test(.timeLimit(.minutes(1)))
    func oneServerServesEveryProvider() async throws {
        try await withSimulator { simulator, client, credentials in
            #expect(simulator.baseURL == "https://127.0.0.1:\(simulator.port)")
            #expect(simulator.fcmTokenURI == simulator.baseURL + "/token")
            #expect(simulator.configuration.server.port == simulator.port)
            #expect(FileManager.default.fileExists(atPath: simulator.caFilePath))

            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let apns = try await sendAPNs(client, credentials)
            let fcm = try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: "abc"))
            // Expo ignores the query the Python SDK adds.
            let expo = try await sendExpo(
                client, body: #"{"to":"ExponentPushToken[abc]"}"#, path: "/--/api/v2/push/send?useFcmV1=true")

            #expect([apns.status, fcm.status, expo.status] as [Int] == [200, 200, 200])
            #expect(simulator.server.statistics.connectionsAccepted == 1)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func everyRequestIsRecordedWithItsAnswer() async throws {
        try await withSimulator { simulator, client, credentials in
            let token = String(repeating: "ab", count: 32)
            _ = try await sendAPNs(client, credentials, token: token)
            _ = try await sendAPNs(client, credentials, token: token, headers: apnsHeaders(authorization: nil))
            _ = try await sendExpo(client, body: #"{"to":"ExponentPushToken[abc]","data":{"incidentId":"12"}}"#)
            let unrouted = try await client.request(path: "/nowhere", body: [1])

            let all = simulator.received()
            #expect(all.map(\.provider) == [.apns, .apns, .expoSend])
            #expect(all.map(\.status) == [200, 403, 200])
            #expect(simulator.received(.apns).count == 2)
            #expect(simulator.received(.fcm).isEmpty)
            #expect(unrouted.status == 404)  // answered, but no provider to record it under

            let first = try #require(all.first)
            #expect(first.method == "POST")
            #expect(first.path == "/3/device/\(token)")
            #expect(first.header("APNS-TOPIC") == "com.example.oncall")
            #expect(first.header("authorization")?.hasPrefix("bearer ") == true)
            #expect(first.json?["aps"]?["alert"]?["title"] == "Incident #12")
            #expect(first.connectionID == 1)
            #expect(first.streamID == 1)
            #expect(first.response.headers.contains { $0.name == "apns-id" })
            #expect(all[1].responseJSON == ["reason": "MissingProviderToken"])
            #expect(all[2].json?["data"]?["incidentId"] == "12")
            #expect(all[2].json?["to"]?.stringValue == "ExponentPushToken[abc]")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func recordingCanBeTurnedOff() async throws {
        try await withSimulator { configuration in
            configuration.recordsRequests = false
        } body: { simulator, client, credentials in
            let token = "0429" + String(repeating: "ab", count: 30)
            let statuses = [
                try await sendAPNs(client, credentials, token: token).status,
                try await sendAPNs(client, credentials, token: token).status,
            ]
            #expect(statuses == [429, 200])  // scripts still count
            #expect(simulator.received().isEmpty)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func errorRateOneFailsEverySendTransiently() async throws {
        try await withSimulator { configuration in
            configuration.errorRate = 1
        } body: { simulator, client, credentials in
            let accessToken = try await fcmAccessToken(client, simulator, credentials)  // never failed
            let apns = try await sendAPNs(client, credentials)
            let fcm = try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: "abc"))
            let expo = try await sendExpo(client, body: #"[{"to":"ExponentPushToken[abc]"}]"#)

            #expect(apns.status == 503)
            #expect(try json(apns)["reason"] == "ServiceUnavailable")
            #expect(fcm.status == 503)
            #expect(fcmErrorCode(try json(fcm)) == "UNAVAILABLE")
            #expect(expo.status == 503)
            #expect(try json(expo)["errors"]?[0]?["isTransient"] == true)
            #expect(simulator.received().map(\.status) == [200, 503, 503, 503])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func latencyDelaysEveryAnswer() async throws {
        let latency = Duration.milliseconds(300)
        try await withSimulator { configuration in
            configuration.latency = latency
            configuration.latencyJitter = .milliseconds(50)
        } body: { _, client, credentials in
            let clock = ContinuousClock()
            let start = clock.now
            let response = try await sendAPNs(client, credentials)
            #expect(response.status == 200)
            #expect(clock.now - start >= latency)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func connectionLimitsOfTheServerApply() async throws {
        try await withSimulator { configuration in
            configuration.server.goAwayEveryStreams = 2
        } body: { simulator, client, credentials in
            _ = try await sendAPNs(client, credentials)
            _ = try await sendAPNs(client, credentials)
            let goAway = try await client.goAway.get()
            #expect(goAway.lastStreamID == 3)
            #expect(simulator.server.statistics.goAwaysSent == 1)
        }
    }

    // MARK: - Pure routing

    @Test func pathsRouteToTheirProvider() {
        typealias Route = ProviderSimulator.Route
        #expect(Route(path: "/3/device/abcd") == .apns(deviceToken: "abcd"))
        #expect(Route(path: "/3/device/") == .apns(deviceToken: ""))
        #expect(Route(path: "/3/device/ab/cd") == .apns(deviceToken: nil))
        #expect(Route(path: "/3/other") == .apns(deviceToken: nil))
        #expect(Route(path: "/v1/projects/p-1/messages:send") == .fcmSend(projectID: "p-1"))
        #expect(Route(path: "/v1/projects//messages:send") == .fcmSend(projectID: nil))
        #expect(Route(path: "/v1/projects/p/x/messages:send") == .fcmSend(projectID: nil))
        #expect(Route(path: "/token") == .fcmToken)
        #expect(Route(path: "/--/api/v2/push/send?useFcmV1=true") == .expoSend)
        #expect(Route(path: "/--/api/v2/push/getReceipts") == .expoReceipts)
        #expect(Route(path: "/") == .unknown)
    }
}

@Suite struct SimulatorCredentialsTests {
    @Test(.timeLimit(.minutes(1)))
    func filesLookLikeApplesAndGooglesOwn() throws {
        let credentials = try sharedCredentials.get()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("relay-simulator-credentials-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let files = try credentials.write(to: directory, tokenURI: "https://127.0.0.1:8443/token")
        #expect(files.apnsKey == directory + "/AuthKey_DEMOKEY001.p8")
        #expect(files.serviceAccount == directory + "/fcm-service-account.json")

        let p8 = try String(contentsOfFile: files.apnsKey, encoding: .utf8)
        #expect(p8.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let apnsKey = try P256.Signing.PrivateKey(pemRepresentation: p8)
        #expect(apnsKey.publicKey.rawRepresentation == credentials.apnsPublicKeys["DEMOKEY001"]?.rawRepresentation)

        let account = try #require(SimulatorJSON(parsing: Data(contentsOf: URL(fileURLWithPath: files.serviceAccount))))
        #expect(account["type"] == "service_account")
        #expect(account["project_id"] == "demo-project")
        #expect(account["client_email"] == "relay@demo-project.iam.gserviceaccount.com")
        #expect(account["token_uri"] == "https://127.0.0.1:8443/token")
        #expect(account["private_key_id"]?.stringValue == credentials.fcmPrivateKeyID)
        let pem = try #require(account["private_key"]?.stringValue)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let rsaKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        #expect(rsaKey.publicKey.derRepresentation == credentials.fcmPublicKey.derRepresentation)
        #expect(rsaKey.keySizeInBits == 2048)

        let permissions = try FileManager.default.attributesOfItem(atPath: files.apnsKey)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }

    @Test func configurationAcceptsTheCredentials() throws {
        let credentials = try sharedCredentials.get()
        var base = ProviderSimulator.Configuration()
        base.latency = .milliseconds(5)
        let configuration = credentials.simulatorConfiguration(base)
        #expect(configuration.latency == .milliseconds(5))
        #expect(configuration.apns.teamID == credentials.apnsTeamID)
        #expect(configuration.apns.keys.keys.sorted() == ["DEMOKEY001"])
        #expect(configuration.fcm.publicKey?.derRepresentation == credentials.fcmPublicKey.derRepresentation)
    }
}

@Suite struct SimulatorJSONTests {
    @Test func parsingKeepsJSONTypesApart() throws {
        let value = try #require(SimulatorJSON(parsing: Array(#"{"b":true,"n":1,"s":"1","z":null,"a":[1.5]}"#.utf8)))
        #expect(value["b"] == .bool(true))
        #expect(value["n"] == .number(1))
        #expect(value["s"] == .string("1"))
        #expect(value["z"] == .null)
        #expect(value["a"]?[0] == .number(1.5))
        #expect(value["missing"] == nil)
        #expect(SimulatorJSON(parsing: Array("{".utf8)) == nil)
        #expect(SimulatorJSON(parsing: Array("42".utf8)) == .number(42))
    }

    @Test func writingIsCompactAndOrdered() {
        let value: SimulatorJSON = ["z": 1, "a": ["x\n\"y\"/\u{1}", 2.5, true, .null], "m": [:]]
        #expect(value.text == #"{"z":1,"a":["x\n\"y\"/\u0001",2.5,true,null],"m":{}}"#)
        #expect(SimulatorJSON.number(1_700_000_000_123).text == "1700000000123")
    }

    @Test func base64URLRoundTrips() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0x00, 0x3E]
        #expect(Base64URL.encode(bytes) == "-_8APg")
        #expect(Base64URL.decode("-_8APg") == bytes)
        #expect(Base64URL.decode("-_8APg==") == nil)  // JWTs are unpadded
        #expect(Base64URL.decode("+/8APg") == nil)  // and use the URL alphabet
    }
}
