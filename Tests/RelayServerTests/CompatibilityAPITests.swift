import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import Testing

@testable import RelayApplication
@testable import RelayServer

@Suite(.timeLimit(.minutes(1)))
struct ExpoAPITests {
    @Test func singleMessageGetsABareTicket() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/--/api/v2/push/send?useFcmV1=true", key: relay.key,
                json:
                    #"{"to":"\#(TestRelay.expoToken)","title":"hi","_contentAvailable":false,"richContent":{"image":"https://a.example/i.png"}}"#
            )
            #expect(response.status == .ok)
            #expect(response.json?["data"]?["status"] == .string("ok"))
            #expect(response.json?["data"]?["id"] != nil)
        }
        #expect(relay.senders[.expo]?.sentPushes.first?.message.image == "https://a.example/i.png")
    }

    @Test func arrayAndMultipleRecipientsGetTicketsInOrderAnyTokenKind() async throws {
        let relay = try await TestRelay()
        let body =
            #"[{"to":["\#(TestRelay.expoToken)","\#(TestRelay.deadAPNsToken)"],"body":"a"},{"to":"\#(TestRelay.fcmToken)","body":"b"}]"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/--/api/v2/push/send", key: relay.key, json: body)
            let data = try #require(response.json?["data"])
            #expect(data[0]?["status"] == .string("ok"))
            #expect(data[1]?["status"] == .string("error"))
            #expect(data[1]?["details"]?["error"] == .string("DeviceNotRegistered"))
            #expect(data[2]?["status"] == .string("ok"))

            let ids = [data[0]?["id"]?.stringValue, data[1]?["id"]?.stringValue].compactMap { $0 }
            let receipts = try await client.post(
                "/--/api/v2/push/getReceipts", key: relay.key, json: #"{"ids":["\#(ids[0])","\#(ids[1])"]}"#)
            #expect(receipts.json?["data"]?[ids[0]]?["status"] == .string("ok"))
            #expect(receipts.json?["data"]?[ids[1]]?["details"]?["error"] == .string("DeviceNotRegistered"))
        }
    }

    @Test func gzippedBodiesFromTheExpoSDKAreAccepted() async throws {
        let relay = try await TestRelay()
        var plain = ByteBuffer(
            string: #"[{"to":"\#(TestRelay.expoToken)","body":"\#(String(repeating: "z", count: 2000))"}]"#)
        let gzipped = try plain.compress(with: .gzip())
        try await relay.application.test(.router) { client in
            let response = try await client.execute(
                uri: "/--/api/v2/push/send", method: .post,
                headers: [
                    .contentType: "application/json", .contentEncoding: "gzip", .authorization: "Bearer \(relay.key)",
                ],
                body: gzipped
            )
            #expect(response.status == .ok)
            #expect(response.json?["data"]?[0]?["status"] == .string("ok"))
        }
    }

    @Test func expoValidationErrorsUseExpoShape() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/--/api/v2/push/send", key: relay.key,
                json:
                    #"[{"to":"\#(TestRelay.expoToken)","sound":{"volume":3}},{"to":"\#(TestRelay.expoToken)","displayMode":"x"}]"#
            )
            #expect(response.status == .badRequest)
            guard case .array(let errors)? = response.json?["errors"] else {
                Issue.record("no errors")
                return
            }
            #expect(Set(errors.compactMap { $0["path"]?.stringValue }) == ["[0].sound.volume", "[1].displayMode"])
        }
    }

    /// Every field of Expo's message format is taken; legacy names stand for the current ones, and fields without
    /// effect (`_displayInForeground`, which the Python SDK sends as `display_in_foreground`) are dropped.
    @Test func everyExpoFieldAndTheLegacyOnesAreAccepted() async throws {
        let relay = try await TestRelay()
        let body =
            #"[{"to":"\#(TestRelay.expoToken)","title":"t","subtitle":"s","body":"b","data":{"k":"v"},"sound":"default","badge":2,"ttl":60,"expiration":4102444800,"priority":"high","channelId":"c","categoryId":"cat","mutableContent":true,"_contentAvailable":true,"interruptionLevel":"active","collapseId":"col","icon":"ic_stat","richContent":{"image":"https://a.example/i.png"},"_displayInForeground":true,"experienceId":"@a/b","scopeKey":"@a/b"},{"to":"\#(TestRelay.expoToken)","body":"b","_category":"old","tag":"t1"}]"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/--/api/v2/push/send", key: relay.key, json: body)
            #expect(response.status == .ok, "\(String(buffer: response.body))")
        }
        let sent = try #require(relay.senders[.expo]?.sentPushes)
        #expect(sent.count == 2)
        #expect(sent[0].message.icon == "ic_stat")
        #expect(sent[0].message.categoryId == "cat")
        #expect(sent[0].message.contentAvailable == true)
        #expect(sent[1].message.categoryId == "old")
        #expect(sent[1].message.collapseId == "t1")
    }

    /// The Expo API answers with Expo's own codes, so each SDK raises what it would against Expo.
    @Test(arguments: [
        ("0401" + String(repeating: "ab", count: 30), "InvalidCredentials"),
        ("0403" + String(repeating: "ab", count: 30), "MismatchSenderId"),
        ("0413" + String(repeating: "ab", count: 30), "MessageTooBig"),
        ("0410" + String(repeating: "ab", count: 30), "DeviceNotRegistered"),
        ("0503" + String(repeating: "ab", count: 30), "ProviderError"),
    ])
    func errorCodesAreExposOwn(_ token: String, _ code: String) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/--/api/v2/push/send", key: relay.key, json: #"[{"to":"\#(token)","body":"b"}]"#)
            #expect(response.json?["data"]?[0]?["details"]?["error"] == .string(code))
            let id = try #require(response.json?["data"]?[0]?["id"]?.stringValue)
            let receipts = try await client.post(
                "/--/api/v2/push/getReceipts", key: relay.key, json: #"{"ids":["\#(id)"]}"#)
            #expect(receipts.json?["data"]?[id]?["details"]?["error"] == .string(code))
        }
    }

    @Test func providerNotConfiguredIsInvalidCredentials() async throws {
        let relay = try await TestRelay(providers: [.expo])
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/--/api/v2/push/send", key: relay.key, json: #"[{"to":"\#(TestRelay.apnsToken)","body":"b"}]"#)
            #expect(response.json?["data"]?[0]?["details"]?["error"] == .string("InvalidCredentials"))
        }
    }
}

/// OneUptime's relay contract (PROTOCOLS.md §4.1), row by row, on both of its paths and with the key in the
/// `Authorization` header or in the path; answers are compared byte for byte.
@Suite(.timeLimit(.minutes(1)))
struct OneUptimeAPITests {
    /// An ordinary (not critical) notification as OneUptime sends one: critical alerts go beyond the tenant's limits
    /// (the critical reserve), so the limits' answers are shown with this one.
    static func ordinaryBody(_ token: String) -> String {
        #"{"to":"\#(token)","title":"Incident note","body":"","data":{"type":"incident-note"},"priority":"normal","channelId":"oncall_low"}"#
    }

    static func body(_ token: String, title: String = "Incident created") -> String {
        #"{"to":"\#(token)","title":"\#(title)","body":"","data":{"type":"incident-created"},"sound":{"critical":true,"name":"default","volume":1},"priority":"high","channelId":"oncall_critical","interruptionLevel":"critical"}"#
    }

    /// A send and a receipts URL of every kind OneUptime can be given: both bases, key as Bearer or in the path.
    struct Endpoint: Sendable, CustomTestStringConvertible {
        var base: String
        var keyInPath: Bool
        var testDescription: String { (keyInPath ? "/t/<key>" : "Bearer ") + base }

        func uri(_ route: String, key: String) -> String { (keyInPath ? "/t/\(key)" : "") + base + "/" + route }
        func post(_ client: some TestClientProtocol, _ route: String, key: String, json: String) async throws
            -> TestResponse
        {
            try await client.post(
                uri(route, key: key), key: keyInPath ? nil : key, json: json,
                headers: [.contentType: "application/json;charset=UTF-8"])
        }
    }

    static let endpoints: [Endpoint] = ["/api/notification/push-relay", "/push-relay"].flatMap { base in
        [Endpoint(base: base, keyInPath: false), Endpoint(base: base, keyInPath: true)]
    }

    static func text(_ response: TestResponse) -> String { String(buffer: response.body) }

    @Test(arguments: endpoints)
    func acceptedCriticalPageIs200WithItsReceiptID(_ endpoint: Endpoint) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await endpoint.post(client, "send", key: relay.key, json: Self.body(TestRelay.expoToken))
            #expect(response.status == .ok)
            let id = try #require(response.object["receiptId"]?.stringValue)
            #expect(Self.text(response) == #"{"receiptId":"\#(id)","success":true}"#)
            #expect(id.utf8.count <= 128 && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })

            let receipts = try await endpoint.post(client, "receipts", key: relay.key, json: #"{"ids":["\#(id)"]}"#)
            #expect(receipts.status == .ok)
            #expect(Self.text(receipts) == #"{"receipts":{"\#(id)":{"status":"ok"}}}"#)
        }
        let sent = try #require(relay.senders[.expo]?.sentPushes.first)
        #expect(sent.isCritical)
        #expect(sent.message.channelId == "oncall_critical")
    }

    @Test(arguments: endpoints)
    func deadTokenIs410WithTopLevelDetails(_ endpoint: Endpoint) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await endpoint.post(
                client, "send", key: relay.key, json: Self.body(TestRelay.deadAPNsToken))
            #expect(response.status == .gone)
            #expect(
                Self.text(response)
                    == #"{"details":{"error":"DeviceNotRegistered"},"message":"The device token is no longer registered (Unregistered); remove it."}"#
            )
            #expect(!Self.text(response).contains(TestRelay.deadAPNsToken))
        }
    }

    /// Every other refusal of the message is a 422 with Expo's code, which OneUptime stores with the page.
    @Test(
        arguments: endpoints,
        [
            (
                "0413" + String(repeating: "ab", count: 30), "MessageTooBig",
                "The message is too big for the provider (PayloadTooLarge)."
            ),
            (
                "0401" + String(repeating: "ab", count: 30), "InvalidCredentials",
                "The relay's provider configuration was refused (InvalidProviderToken); the token is not at fault."
            ),
            (
                "0403" + String(repeating: "ab", count: 30), "MismatchSenderId",
                "The relay's provider configuration was refused (DeviceTokenNotForTopic); the token is not at fault."
            ),
        ])
    func otherRefusalsAre422WithExposCode(
        _ endpoint: Endpoint, _ refusal: (token: String, code: String, message: String)
    ) async throws {
        let (token, code, message) = refusal
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await endpoint.post(client, "send", key: relay.key, json: Self.body(token))
            #expect(response.status == .unprocessableContent)
            #expect(Self.text(response) == #"{"details":{"error":"\#(code)"},"message":"\#(message)"}"#)
        }
    }

    @Test func criticalAlertsNotAllowedIs422() async throws {
        let relay = try await TestRelay(allowCriticalAlerts: false)
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/push-relay/send", key: relay.key, json: Self.body(TestRelay.apnsToken))
            #expect(response.status == .unprocessableContent)
            #expect(response.object["details"]?["error"] == .string("DeveloperError"))
            #expect(response.object["message"]?.stringValue?.contains("critical alerts") == true)
        }
        #expect(relay.sentCount == 0)
    }

    /// OneUptime's RFC: the relay accepts `isCriticalAlert` and forwards it, under the native route's policy.
    @Test(arguments: [true, false])
    func isCriticalAlertIsAcceptedUnderTheCriticalPolicy(_ allowed: Bool) async throws {
        let relay = try await TestRelay(allowCriticalAlerts: allowed)
        let body =
            #"{"to":"\#(TestRelay.apnsToken)","title":"Incident #12","body":"Primary DB unreachable","isCriticalAlert":true}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/push-relay/send", key: relay.key, json: body)
            if allowed {
                #expect(response.status == .ok, "\(Self.text(response))")
                #expect(response.object["success"] == .bool(true))
            } else {
                #expect(response.status == .unprocessableContent)
                #expect(response.object["details"]?["error"] == .string("DeveloperError"))
            }
        }
        if allowed {
            let sent = try #require(relay.senders[.apns]?.sentPushes.first)
            #expect(sent.isCritical)
            #expect(sent.message.isCriticalAlert == true)
        } else {
            #expect(relay.sentCount == 0)
        }
    }

    @Test func perDeviceRateIs422MessageRateExceeded() async throws {
        let relay = try await TestRelay(
            limits: RateLimits(ratePerSecond: 100, burst: 200, dailyQuota: 10_000, perDevicePerMinute: 1))
        try await relay.application.test(.router) { client in
            _ = try await client.post(
                "/push-relay/send", key: relay.key, json: Self.ordinaryBody(TestRelay.apnsToken))
            let response = try await client.post(
                "/push-relay/send", key: relay.key, json: Self.ordinaryBody(TestRelay.apnsToken))
            #expect(response.status == .unprocessableContent)
            #expect(response.object["details"]?["error"] == .string("MessageRateExceeded"))
        }
    }

    @Test(arguments: endpoints)
    func upstreamUnavailableIs500ServerError(_ endpoint: Endpoint) async throws {
        let relay = try await TestRelay()
        let flaky = "0503" + String(repeating: "ab", count: 30)
        try await relay.application.test(.router) { client in
            let response = try await endpoint.post(client, "send", key: relay.key, json: Self.body(flaky))
            #expect(response.status == .internalServerError)
            #expect(Self.text(response) == #"{"error":"Server Error"}"#)
        }
    }

    @Test(arguments: endpoints)
    func providerNotConfiguredIs400(_ endpoint: Endpoint) async throws {
        let relay = try await TestRelay(providers: [.expo])
        try await relay.application.test(.router) { client in
            let response = try await endpoint.post(client, "send", key: relay.key, json: Self.body(TestRelay.apnsToken))
            #expect(response.status == .badRequest)
            #expect(response.object.keys.sorted() == ["error"])
            #expect(response.object["error"]?.stringValue?.hasPrefix("Push relay is not configured. ") == true)
        }
    }

    @Test(arguments: endpoints)
    func invalidInputIs400WithAnErrorMessageAndNoToken(_ endpoint: Endpoint) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await endpoint.post(
                client, "send", key: relay.key, json: #"{"to":"\#(TestRelay.apnsToken)","interruptionLevel":"loud"}"#)
            #expect(response.status == .badRequest)
            #expect(response.object.keys.sorted() == ["error"])
            #expect(response.object["error"]?.stringValue?.contains("interruptionLevel") == true)
            let unknown = try await endpoint.post(
                client, "send", key: relay.key, json: #"{"to":"\#(TestRelay.apnsToken)","badge":1}"#)
            #expect(unknown.status == .badRequest)
            let badToken = try await endpoint.post(
                client, "send", key: relay.key, json: #"{"to":"not-a-token-zzz","title":"x"}"#)
            #expect(badToken.status == .badRequest)
            #expect(!Self.text(badToken).contains("not-a-token-zzz"))
        }
        #expect(relay.sentCount == 0)
    }

    @Test(arguments: endpoints)
    func tenantRateLimitIs429WithOneUptimesBody(_ endpoint: Endpoint) async throws {
        let relay = try await TestRelay(
            limits: RateLimits(ratePerSecond: 0.01, burst: 1, dailyQuota: 100, perDevicePerMinute: 30))
        try await relay.application.test(.router) { client in
            _ = try await endpoint.post(client, "send", key: relay.key, json: Self.ordinaryBody(TestRelay.expoToken))
            let limited = try await endpoint.post(
                client, "send", key: relay.key, json: Self.ordinaryBody(TestRelay.expoToken))
            #expect(limited.status == .tooManyRequests)
            #expect(Self.text(limited) == #"{"message":"Rate limit exceeded. Please try again later."}"#)
            #expect(limited.headers[.retryAfter] != nil)
            // Receipt lookups have their own budget: a tenant out of sends can still ask.
            let receipts = try await endpoint.post(client, "receipts", key: relay.key, json: #"{"ids":["a"]}"#)
            #expect(receipts.status == .ok)
        }
    }

    @Test func receiptLookupsHaveTheirOwnBudgetAnd429() async throws {
        // A clock that stands still: the lookup bucket does not refill while the test runs, however slowly.
        let relay = try await TestRelay(clock: .manual(ManualClock(date: Date())))
        let burst = RateLimiterRegistry.receiptLookups.burst
        try await relay.application.test(.router) { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0...burst {
                statuses.append(
                    try await client.post("/push-relay/receipts", key: relay.key, json: #"{"ids":["a"]}"#).status)
            }
            #expect(statuses.prefix(burst).allSatisfy { $0 == .ok })
            #expect(statuses.last == .tooManyRequests)
            let limited = try await client.post("/push-relay/receipts", key: relay.key, json: #"{"ids":["a"]}"#)
            #expect(Self.text(limited) == #"{"message":"Rate limit exceeded. Please try again later."}"#)
            // Sends are untouched by lookups.
            let send = try await client.post("/push-relay/send", key: relay.key, json: Self.body(TestRelay.expoToken))
            #expect(send.status == .ok)
        }
    }

    @Test func pendingAtTheWaitDeadlineIs200WithReceiptIDAndLeftOutOfReceipts() async throws {
        let gate = Gate()
        let relay = try await TestRelay(gate: gate, waitDeadline: .milliseconds(20))
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/push-relay/send", key: relay.key, json: Self.body(TestRelay.apnsToken))
            #expect(response.status == .ok)
            let id = try #require(response.object["receiptId"]?.stringValue)
            let receipts = try await client.post("/push-relay/receipts", key: relay.key, json: #"{"ids":["\#(id)"]}"#)
            #expect(Self.text(receipts) == #"{"receipts":{}}"#)
            gate.open()
        }
    }

    @Test func lateExpoReceiptErrorAndUnknownAndOtherTenantsIds() async throws {
        let relay = try await TestRelay()
        let (_, otherKey) = try await TestRelay.addTenant(to: relay.store, name: "other", allowCriticalAlerts: true)
        let lateDead = "ExponentPushToken[ticket-late]"
        try await relay.application.test(.router) { client in
            let send = try await client.post("/push-relay/send", key: relay.key, json: Self.body(lateDead))
            #expect(send.status == .ok)
            let id = try #require(send.object["receiptId"]?.stringValue)
            let pending = try await client.post("/push-relay/receipts", key: relay.key, json: #"{"ids":["\#(id)"]}"#)
            #expect(Self.text(pending) == #"{"receipts":{}}"#, "accepted by Expo, no receipt yet: not final")

            try await AuditedExpoReceipts(relay: relay.relay).recordExpoReceipt(
                ticketID: "ticket-late",
                outcome: .tokenInvalid(.deviceNotRegistered, reason: "DeviceNotRegistered", since: nil)
            )
            let final = try await client.post(
                "/push-relay/receipts", key: relay.key, json: #"{"ids":["\#(id)","\#(id)","unknown-id"]}"#)
            #expect(
                Self.text(final)
                    == #"{"receipts":{"\#(id)":{"details":{"error":"DeviceNotRegistered"},"message":"The device token is no longer registered (DeviceNotRegistered); remove it.","status":"error"}}}"#
            )
            let other = try await client.post(
                "/t/\(otherKey)/push-relay/receipts", key: nil, json: #"{"ids":["\#(id)"]}"#)
            #expect(Self.text(other) == #"{"receipts":{}}"#, "another tenant's receipt is left out")
        }
    }

    @Test(arguments: [
        #"{"ids":[]}"#, #"{"ids":"abc"}"#, #"{"ids":["has space"]}"#,
        #"{"ids":["\#(String(repeating: "a", count: 129))"]}"#,
        #"{"ids":[1]}"#, #"{"ids":["a"],"more":1}"#, "[]",
        #"{"ids":[\#((0...300).map { "\"id-\($0)\"" }.joined(separator: ","))]}"#,
    ])
    func invalidReceiptIDsAre400(_ body: String) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post("/api/notification/push-relay/receipts", key: relay.key, json: body)
            #expect(response.status == .badRequest)
            #expect(response.object.keys.sorted() == ["error"])
        }
    }

    @Test func threeHundredIdsWithDuplicatesAreAnswered() async throws {
        let relay = try await TestRelay()
        let ids = (0..<300).map { "\"id-\($0)\"" } + ["\"id-0\""]
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/push-relay/receipts", key: relay.key, json: #"{"ids":[\#(ids.joined(separator: ","))]}"#)
            #expect(response.status == .ok)
            #expect(Self.text(response) == #"{"receipts":{}}"#)
        }
    }

    @Test func keyInThePathIsNeverLogged() async throws {
        let relay = try await TestRelay()
        // The whole secret: base64url may itself hold "_", so splitting the key on "_" could leave a few characters
        // that any log line (a hex request id) might contain by chance.
        let secret = try #require(TenantKeys.parse(relay.key)?.secret)
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/t/\(relay.key)/push-relay/send", key: nil, json: Self.body(TestRelay.apnsToken))
            #expect(response.status == .ok)
            let wrong = try await client.post(
                "/t/prk_0000000000000000_\(String(repeating: "x", count: 43))/push-relay/send", key: nil,
                json: Self.body(TestRelay.apnsToken))
            #expect(wrong.status == .unauthorized)
        }
        #expect(!relay.logs.all.isEmpty)
        #expect(
            relay.logs.all.allSatisfy { !$0.contains(secret) && !$0.contains(TestRelay.apnsToken) }, "\(relay.logs.all)"
        )
    }

    /// Title, body and string data values over 3,072 bytes are shortened on a character boundary, not refused.
    @Test func longTextsAreShortenedOnAUTF8Boundary() async throws {
        // 1,535 two-byte characters (3,070 bytes) then a four-byte one: 3,074 bytes, cut before the emoji.
        let title = String(repeating: "é", count: 1535) + "😀" + "tail"
        let body = String(repeating: "a", count: 3071) + "€"  // 3,074 bytes: the euro sign (3 bytes) does not fit.
        let relay = try await TestRelay(providers: [.expo])
        let json: JSONValue = .object([
            "to": .string(TestRelay.expoToken), "title": .string(title), "body": .string(body),
            "data": .object(["long": .string(body), "short": .string("ok")]),
        ])
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/push-relay/send", key: relay.key, json: String(decoding: json.encodedBytes(), as: UTF8.self))
            #expect(response.status == .ok)
        }
        let shortened = try #require(relay.senders[.expo]?.sentPushes.first?.message)
        #expect(shortened.title == String(repeating: "é", count: 1535))
        #expect(shortened.body == String(repeating: "a", count: 3071))
        #expect(shortened.data?["long"] == .string(String(repeating: "a", count: 3071)))
        #expect(shortened.data?["short"] == .string("ok"))
        #expect(OneUptimeAPI.shortened(title) == String(repeating: "é", count: 1535))
        #expect(OneUptimeAPI.shortened(body) == String(repeating: "a", count: 3071))
        #expect(OneUptimeAPI.shortened("short") == "short")
        let exact = String(repeating: "€", count: 1024)  // exactly 3,072 bytes
        #expect(OneUptimeAPI.shortened(exact) == exact)

        let fits = try await TestRelay(providers: [.expo])
        let long = String(repeating: "ü", count: 2000)  // 4,000 bytes
        try await fits.application.test(.router) { client in
            let response = try await client.post(
                "/push-relay/send", key: fits.key,
                json: #"{"to":"\#(TestRelay.expoToken)","title":"\#(long)","body":""}"#)
            #expect(response.status == .ok)
        }
        let sent = try #require(fits.senders[.expo]?.sentPushes.first)
        #expect(sent.message.title == String(repeating: "ü", count: 1536))
    }
}

/// A tenant key in the path works for every tenant route, and for nothing else.
@Suite(.timeLimit(.minutes(1)))
struct TenantKeyInPathTests {
    @Test func everyTenantRouteTakesTheKeyInThePath() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let native = try await client.post(
                "/t/\(relay.key)/v1/push", key: nil,
                json: #"{"messages":[{"to":"\#(TestRelay.expoToken)","body":"x"}]}"#)
            #expect(native.status == .ok)
            let id = try #require(native.json?["data"]?[0]?["id"]?.stringValue)
            let nativeReceipts = try await client.post(
                "/t/\(relay.key)/v1/receipts", key: nil, json: #"{"ids":["\#(id)"]}"#)
            #expect(nativeReceipts.json?["data"]?[id]?["status"] == .string("ok"))
            let expo = try await client.post(
                "/t/\(relay.key)/--/api/v2/push/send", key: nil, json: #"{"to":"\#(TestRelay.expoToken)","body":"x"}"#)
            #expect(expo.json?["data"]?["status"] == .string("ok"))
            let expoReceipts = try await client.post(
                "/t/\(relay.key)/--/api/v2/push/getReceipts", key: nil, json: #"{"ids":["\#(id)"]}"#)
            #expect(expoReceipts.json?["data"]?[id]?["status"] == .string("ok"))
        }
    }

    @Test func aKeyInThePathLeadsNowhereElse() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let health = try await client.execute(uri: "/t/\(relay.key)/healthz", method: .get)
            #expect(health.status == .notFound)
            let admin = try await client.execute(uri: "/t/\(relay.key)/admin/v1/tenants", method: .get)
            #expect(admin.status == .notFound)
            let empty = try await client.post("/t//v1/push", key: nil, json: #"{"messages":[]}"#)
            #expect(empty.status == .notFound)
        }
    }
}
