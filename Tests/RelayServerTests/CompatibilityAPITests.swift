import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import Testing

@testable import RelayServer

@Suite(.timeLimit(.minutes(1)))
struct ExpoAPITests {
    @Test func singleMessageGetsABareTicket() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post("/--/api/v2/push/send?useFcmV1=true", key: relay.key, json: #"{"to":"\#(TestRelay.expoToken)","title":"hi","_contentAvailable":false,"richContent":{"image":"https://a.example/i.png"}}"#)
            #expect(response.status == .ok)
            #expect(response.json?["data"]?["status"] == .string("ok"))
            #expect(response.json?["data"]?["id"] != nil)
        }
        #expect(relay.senders[.expo]?.sentPushes.first?.message.image == "https://a.example/i.png")
    }

    @Test func arrayAndMultipleRecipientsGetTicketsInOrderAnyTokenKind() async throws {
        let relay = try await TestRelay()
        let body = #"[{"to":["\#(TestRelay.expoToken)","\#(TestRelay.deadAPNsToken)"],"body":"a"},{"to":"\#(TestRelay.fcmToken)","body":"b"}]"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/--/api/v2/push/send", key: relay.key, json: body)
            let data = try #require(response.json?["data"])
            #expect(data[0]?["status"] == .string("ok"))
            #expect(data[1]?["status"] == .string("error"))
            #expect(data[1]?["details"]?["error"] == .string("DeviceNotRegistered"))
            #expect(data[2]?["status"] == .string("ok"))

            let ids = [data[0]?["id"]?.stringValue, data[1]?["id"]?.stringValue].compactMap { $0 }
            let receipts = try await client.post("/--/api/v2/push/getReceipts", key: relay.key, json: #"{"ids":["\#(ids[0])","\#(ids[1])"]}"#)
            #expect(receipts.json?["data"]?[ids[0]]?["status"] == .string("ok"))
            #expect(receipts.json?["data"]?[ids[1]]?["details"]?["error"] == .string("DeviceNotRegistered"))
        }
    }

    @Test func gzippedBodiesFromTheExpoSDKAreAccepted() async throws {
        let relay = try await TestRelay()
        var plain = ByteBuffer(string: #"[{"to":"\#(TestRelay.expoToken)","body":"\#(String(repeating: "z", count: 2000))"}]"#)
        let gzipped = try plain.compress(with: .gzip())
        try await relay.application.test(.router) { client in
            let response = try await client.execute(
                uri: "/--/api/v2/push/send", method: .post,
                headers: [.contentType: "application/json", .contentEncoding: "gzip", .authorization: "Bearer \(relay.key)"],
                body: gzipped
            )
            #expect(response.status == .ok)
            #expect(response.json?["data"]?[0]?["status"] == .string("ok"))
        }
    }

    @Test func expoValidationErrorsUseExpoShape() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post("/--/api/v2/push/send", key: relay.key, json: #"[{"to":"\#(TestRelay.expoToken)","sound":{"volume":3}},{"to":"\#(TestRelay.expoToken)","icon":"x"}]"#)
            #expect(response.status == .badRequest)
            guard case .array(let errors)? = response.json?["errors"] else {
                Issue.record("no errors")
                return
            }
            #expect(Set(errors.compactMap { $0["path"]?.stringValue }) == ["[0].sound.volume", "[1].icon"])
        }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct OneUptimeAPITests {
    static func body(_ token: String) -> String {
        #"{"to":"\#(token)","title":"Incident created","body":"","data":{"type":"incident-created"},"sound":{"critical":true,"name":"default","volume":1},"priority":"high","channelId":"oncall_critical","interruptionLevel":"critical"}"#
    }

    @Test(arguments: ["/api/notification/push-relay/send", "/push-relay/send"])
    func criticalPageWithBearerKey(_ path: String) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post(path, key: relay.key, json: Self.body(TestRelay.expoToken), headers: [.contentType: "application/json;charset=UTF-8"])
            #expect(response.status == .ok)
            #expect(response.object["success"] == .bool(true))
            #expect(response.object["ticket"]?["status"] == .string("ok"))
        }
        let sent = try #require(relay.senders[.expo]?.sentPushes.first)
        #expect(sent.isCritical)
        #expect(sent.message.channelId == "oncall_critical")
    }

    @Test(arguments: ["/api/notification/push-relay/send", "/push-relay/send"])
    func keyInThePathIsAcceptedAndNeverLogged(_ path: String) async throws {
        let relay = try await TestRelay()
        // The whole secret: base64url may itself hold "_", so splitting the key on "_" could leave a few characters
        // that any log line (a hex request id) might contain by chance.
        let secret = try #require(TenantKeys.parse(relay.key)?.secret)
        try await relay.application.test(.router) { client in
            let response = try await client.post("/t/\(relay.key)\(path)", key: nil, json: Self.body(TestRelay.apnsToken))
            #expect(response.status == .ok)
            let wrong = try await client.post("/t/prk_0000000000000000_\(String(repeating: "x", count: 43))\(path)", key: nil, json: Self.body(TestRelay.apnsToken))
            #expect(wrong.status == .unauthorized)
        }
        #expect(!relay.logs.all.isEmpty)
        #expect(relay.logs.all.allSatisfy { !$0.contains(secret) && !$0.contains(TestRelay.apnsToken) }, "\(relay.logs.all)")
    }

    @Test func deadTokenIs410WithRemoveToken() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post("/push-relay/send", key: relay.key, json: Self.body(TestRelay.deadAPNsToken))
            #expect(response.status == .gone)
            #expect(response.object["error"] == .string("DeviceNotRegistered"))
            #expect(response.object["removeToken"] == .bool(true))
        }
    }

    @Test func upstreamFailureIs502WithItsCode() async throws {
        let relay = try await TestRelay()
        let flaky = "0503" + String(repeating: "ab", count: 30)
        try await relay.application.test(.router) { client in
            let response = try await client.post("/push-relay/send", key: relay.key, json: Self.body(flaky))
            #expect(response.status == .badGateway)
            #expect(response.object["error"] == .string("ProviderUnavailable"))
        }
    }

    @Test func validationFailureIs400WithAnErrorMessage() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post("/push-relay/send", key: relay.key, json: #"{"to":"\#(TestRelay.apnsToken)","interruptionLevel":"loud"}"#)
            #expect(response.status == .badRequest)
            #expect(response.object["error"]?.stringValue?.contains("interruptionLevel") == true)
            let unknown = try await client.post("/push-relay/send", key: relay.key, json: #"{"to":"\#(TestRelay.apnsToken)","badge":1}"#)
            #expect(unknown.status == .badRequest)
        }
    }

    @Test func rateLimitIs429WithRetryAfter() async throws {
        let relay = try await TestRelay(limits: RateLimits(ratePerSecond: 0.01, burst: 1, dailyQuota: 100, perDevicePerMinute: 30))
        try await relay.application.test(.router) { client in
            _ = try await client.post("/push-relay/send", key: relay.key, json: Self.body(TestRelay.expoToken))
            let limited = try await client.post("/push-relay/send", key: relay.key, json: Self.body(TestRelay.expoToken))
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] != nil)
        }
    }
}
