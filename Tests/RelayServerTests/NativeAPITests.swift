import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

@Suite(.timeLimit(.minutes(1)))
struct NativeAPITests {
    @Test func healthAndUnknownRoutesAnswerJSON() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
            #expect(health.object["status"] == .string("ok"))
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            #expect(ready.object["providers"] == .array([.string("apns"), .string("expo"), .string("fcm")]))
            let missing = try await client.execute(uri: "/nope", method: .get)
            #expect(missing.status == .notFound)
            #expect(missing.object["errors"]?[0]?["code"] == .string("NOT_FOUND"))
            #expect(missing.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(missing.headers[HTTPField.Name("X-Request-ID")!] != nil)
        }
    }

    @Test func pushAnswersOneTicketPerTokenInOrder() async throws {
        let relay = try await TestRelay()
        let body =
            #"{"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.deadAPNsToken)"],"title":"t","body":"b"},{"to":"\#(TestRelay.fcmToken)","body":"x"},{"to":"\#(TestRelay.expoToken)","body":"y"}]}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(response.status == .ok)
            let data = try #require(response.json?["data"])
            #expect(data[0]?["status"] == .string("ok"))
            #expect(data[0]?["provider"] == .string("apns"))
            #expect(data[0]?["providerMessageId"] != nil)
            #expect(data[1]?["status"] == .string("error"))
            #expect(data[1]?["details"]?["error"] == .string("DeviceNotRegistered"))
            #expect(data[1]?["details"]?["removeToken"] == .bool(true))
            #expect(data[2]?["provider"] == .string("fcm"))
            #expect(data[3]?["provider"] == .string("expo"))
            #expect(response.headers[HTTPField.Name("RateLimit-Limit")!] == "200")
            #expect(response.headers[HTTPField.Name("RateLimit-Remaining")!] == "196")
            #expect(response.headers[HTTPField.Name("RateLimit-Reset")!] != nil)

            // Receipts are kept and can be looked up by their ids.
            let ids = (0..<4).compactMap { data[$0]?["id"]?.stringValue }
            let lookup = try await client.post(
                "/v1/receipts", key: relay.key, json: #"{"ids":["\#(ids.joined(separator: "\",\""))"]}"#)
            #expect(lookup.status == .ok)
            #expect(lookup.json?["data"]?[ids[0]]?["status"] == .string("ok"))
            #expect(lookup.json?["data"]?[ids[1]]?["details"]?["error"] == .string("DeviceNotRegistered"))
        }
    }

    @Test(arguments: [
        nil, "", "Bearer", "Bearer \t ", " \t", "Bearer nonsense", "Basic abc", "Bearerx prk_0123456789abcdef_x",
        "Bearer prk_0123456789abcdef_wrongwrongwrongwrongwrongwrongwrongwrongwrongxx",
    ])
    func missingOrWrongKeysAreUnauthorized(_ authorization: String?) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            var headers: HTTPFields = [.contentType: "application/json"]
            if let authorization { headers[.authorization] = authorization }
            let response = try await client.execute(
                uri: "/v1/push", method: .post, headers: headers, body: ByteBuffer(string: "{}"))
            #expect(response.status == .unauthorized)
            #expect(response.object["errors"]?[0]?["code"] == .string("UNAUTHORIZED"))
        }
        #expect(relay.sentCount == 0)
    }

    @Test(arguments: ["Bearer %@", "bearer %@", "BEARER   %@ \t", "  Bearer %@"])
    func theBearerSchemeInAnyCaseWithBlanksAroundTheKey(_ format: String) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let headers: HTTPFields = [
                .contentType: "application/json",
                .authorization: format.replacingOccurrences(of: "%@", with: relay.key),
            ]
            let response = try await client.execute(
                uri: "/v1/push", method: .post, headers: headers, body: ByteBuffer(string: "{}"))
            // Past authentication: the empty body is what is wrong.
            #expect(response.status == .badRequest)
            #expect(response.object["errors"]?[0]?["code"] == .string("VALIDATION_ERROR"))
        }
    }

    @Test func wrongSecretForARealKeyIdIsUnauthorized() async throws {
        let relay = try await TestRelay()
        let forged = String(relay.key.prefix(21)) + String(repeating: "A", count: 43)
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: forged, json: "{}")
            #expect(response.status == .unauthorized)
        }
    }

    @Test func disabledTenantIsForbidden() async throws {
        let store = MemoryStore()
        let (_, key) = try await TestRelay.addTenant(to: store, name: "gone")
        var tenant = try #require(try await store.tenant(named: "gone"))
        tenant.disabled = true
        let relay = Relay(store: DisablingStore(base: store, disabled: tenant), senders: [:])
        try await buildApplication(RelayApplicationParts(relay: relay)).test(.router) { client in
            let response = try await client.post("/v1/push", key: key, json: "{}")
            #expect(response.status == .forbidden)
            #expect(response.object["errors"]?[0]?["code"] == .string("TENANT_DISABLED"))
        }
    }

    @Test func validationErrorsNameEveryPath() async throws {
        let relay = try await TestRelay()
        let body = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","badge":-1},{"to":"nope","isCriticalAlrt":true}]}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(response.status == .badRequest)
            guard case .array(let errors)? = response.json?["errors"] else {
                Issue.record("no errors array")
                return
            }
            #expect(
                Set(errors.compactMap { $0["path"]?.stringValue }) == [
                    "messages[0].badge", "messages[1].to[0]", "messages[1].isCriticalAlrt",
                ])
            #expect(errors.allSatisfy { $0["code"] == .string("VALIDATION_ERROR") })
        }
        #expect(relay.sentCount == 0)
    }

    @Test func badBodiesGetTheirOwnStatus() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let notJSON = try await client.post("/v1/push", key: relay.key, json: "{oops")
            #expect(notJSON.status == .badRequest)
            let text = try await client.execute(
                uri: "/v1/push", method: .post,
                headers: [.contentType: "text/plain", .authorization: "Bearer \(relay.key)"],
                body: ByteBuffer(string: "hi")
            )
            #expect(text.status == .unsupportedMediaType)
            #expect(text.object["errors"]?[0]?["code"] == .string("UNSUPPORTED_MEDIA_TYPE"))
            let huge = try await client.post(
                "/v1/push", key: relay.key, json: String(repeating: " ", count: (1 << 20) + 1))
            #expect(huge.status == .contentTooLarge)
            #expect(huge.object["errors"]?[0]?["code"] == .string("PAYLOAD_TOO_LARGE"))
        }
    }

    @Test(arguments: [
        #""isCriticalAlert":true"#,
        #""interruptionLevel":"critical""#,
        #""sound":{"critical":true,"name":"default","volume":1}"#,
    ])
    func criticalAlertsNeedPermissionWhateverTheSpelling(_ spelling: String) async throws {
        let relay = try await TestRelay(allowCriticalAlerts: false)
        let body =
            #"{"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.expoToken)"],"body":"page",\#(spelling)}]}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(response.status == .ok)
            for index in 0..<2 {
                #expect(response.json?["data"]?[index]?["details"]?["error"] == .string("CriticalAlertsNotAllowed"))
                #expect(response.json?["data"]?[index]?["details"]?["removeToken"] == .bool(false))
            }
        }
        #expect(relay.sentCount == 0, "nothing is sent upstream for a refused critical alert")
    }

    @Test func allowedTenantsSendCriticalAlerts() async throws {
        let relay = try await TestRelay(allowCriticalAlerts: true)
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key,
                json: #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"page","interruptionLevel":"critical"}]}"#)
            #expect(response.json?["data"]?[0]?["status"] == .string("ok"))
        }
        #expect(relay.senders[.apns]?.sentPushes.first?.isCritical == true)
    }

    @Test func unconfiguredProviderIsReportedPerNotification() async throws {
        let relay = try await TestRelay(providers: [.expo])
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key,
                json: #"{"messages":[{"to":["\#(TestRelay.apnsToken)","\#(TestRelay.expoToken)"],"body":"x"}]}"#)
            #expect(response.json?["data"]?[0]?["details"]?["error"] == .string("ProviderNotConfigured"))
            #expect(response.json?["data"]?[1]?["status"] == .string("ok"))
        }
    }

    @Test func requestOverTheRateIsRefusedWholeWithRetryAfter() async throws {
        let relay = try await TestRelay(
            limits: RateLimits(ratePerSecond: 0.01, burst: 5, dailyQuota: 100, perDevicePerMinute: 30))
        let two = Array(repeating: "\"\(TestRelay.expoToken)\"", count: 2).joined(separator: ",")
        let four = Array(repeating: "\"\(TestRelay.expoToken)\"", count: 4).joined(separator: ",")
        try await relay.application.test(.router) { client in
            let first = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":[\#(two)],"body":"x"}]}"#)
            #expect(first.status == .ok)
            let refused = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":[\#(four)],"body":"x"}]}"#)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.object["errors"]?[0]?["code"] == .string("TOO_MANY_REQUESTS"))
            #expect(refused.headers[.retryAfter] != nil)
            #expect(refused.headers[HTTPField.Name("RateLimit-Remaining")!] == "3")
            let fits = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(TestRelay.expoToken)","body":"x"}]}"#)
            #expect(fits.status == .ok)
        }
        #expect(relay.sentCount == 3, "the refused request sent nothing")
    }

    @Test func runawayDeviceGetsMessageRateExceeded() async throws {
        let relay = try await TestRelay(
            limits: RateLimits(ratePerSecond: 100, burst: 200, dailyQuota: 1000, perDevicePerMinute: 2))
        let three = Array(repeating: "\"\(TestRelay.apnsToken)\"", count: 3).joined(separator: ",")
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":[\#(three)],"body":"loop"}]}"#)
            #expect(response.json?["data"]?[0]?["status"] == .string("ok"))
            #expect(response.json?["data"]?[1]?["status"] == .string("ok"))
            #expect(response.json?["data"]?[2]?["details"]?["error"] == .string("MessageRateExceeded"))
            #expect(response.json?["data"]?[2]?["details"]?["retryAfter"] != nil)
        }
        #expect(relay.sentCount == 2)
    }

    @Test func slowUpstreamAnswersPendingAndTheReceiptCompletesLater() async throws {
        let gate = Gate()
        let relay = try await TestRelay(gate: gate, waitDeadline: .milliseconds(50))
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#)
            #expect(response.json?["data"]?[0]?["status"] == .string("pending"))
            let id = try #require(response.json?["data"]?[0]?["id"]?.stringValue)
            let early = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":["\#(id)"]}"#)
            #expect(early.json?["data"]?[id]?["status"] == .string("pending"))
            // The upstream answers; the job, still running in the background, completes the receipt.
            gate.open()
            await relay.relay.queue.waitUntilIdle()
            let later = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":["\#(id)"]}"#)
            #expect(later.json?["data"]?[id]?["status"] == .string("ok"))
        }
    }

    /// The receipt of a Live Activity push names its event; other receipts, and Expo's shape of any, have no such key.
    @Test func aLiveActivitysReceiptNamesItsEvent() async throws {
        let relay = try await TestRelay()
        let body =
            #"{"messages":[{"to":"\#(TestRelay.apnsToken)","liveActivity":{"event":"update","contentState":{"status":"mitigated"}}},{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(response.status == .ok)
            let ids = try [0, 1].map { try #require(response.json?["data"]?[$0]?["id"]?.stringValue) }
            let lookup = try await client.post(
                "/v1/receipts", key: relay.key, json: #"{"ids":["\#(ids[0])","\#(ids[1])"]}"#)
            let activity = try #require(lookup.json?["data"]?[ids[0]]?.objectValue)
            #expect(activity["liveActivityEvent"] == .string("update"))
            #expect(activity["status"] == .string("ok"))
            #expect(lookup.json?["data"]?[ids[1]]?.objectValue?.keys.contains("liveActivityEvent") == false)
            let expo = try await client.post(
                "/--/api/v2/push/getReceipts", key: relay.key, json: #"{"ids":["\#(ids[0])"]}"#)
            #expect(expo.json?["data"]?[ids[0]]?.objectValue?.keys.contains("liveActivityEvent") == false)
        }
    }

    @Test(arguments: LiveActivityEvent.allCases)
    func theNativeReceiptJSONHasTheEventOnlyWhenSet(event: LiveActivityEvent) {
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        var receipt = Receipt(
            id: "r1", tenantID: "t1", keyID: "k1", provider: .apns, tokenFingerprint: "fp", isCritical: false,
            status: .ok, providerMessageID: "m1", createdAt: at, updatedAt: at, expiresAt: at.addingTimeInterval(60)
        )
        let plain: [String: JSONValue] = [
            "status": .string("ok"), "provider": .string("apns"), "critical": .bool(false),
            "updatedAt": .string("2027-01-15T08:00:00Z"), "app": .string("default"), "providerMessageId": .string("m1"),
        ]
        #expect(receipt.nativeJSON == .object(plain))
        receipt.liveActivityEvent = event
        #expect(receipt.nativeJSON == .object(plain.merging(["liveActivityEvent": .string(event.rawValue)]) { $1 }))
    }

    @Test func receiptsOfOtherTenantsAreAbsent() async throws {
        let relay = try await TestRelay()
        let (_, otherKey) = try await TestRelay.addTenant(to: relay.store, name: "other")
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#)
            let id = try #require(response.json?["data"]?[0]?["id"]?.stringValue)
            let mine = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":["\#(id)","unknown"]}"#)
            #expect(mine.json?["data"]?.objectValue?.keys.sorted() == [id])
            let theirs = try await client.post("/v1/receipts", key: otherKey, json: #"{"ids":["\#(id)"]}"#)
            #expect(theirs.status == .ok)
            #expect(theirs.json?["data"] == .object([:]))
        }
    }

    @Test func receiptRequestsAreValidated() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let empty = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":[]}"#)
            #expect(empty.status == .badRequest)
            #expect(empty.object["errors"]?[0]?["path"] == .string("ids"))
            let tooMany = try await client.post(
                "/v1/receipts", key: relay.key,
                json: #"{"ids":[\#(Array(repeating: "\"x\"", count: 1001).joined(separator: ","))]}"#)
            #expect(tooMany.status == .badRequest)
            let wrongType = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":["a",2]}"#)
            #expect(wrongType.object["errors"]?[0]?["path"] == .string("ids[1]"))
        }
    }

    @Test func shuttingDownRefusesNewPushes() async throws {
        let relay = try await TestRelay()
        relay.relay.queue.stopAccepting()
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#)
            #expect(response.status == .serviceUnavailable)
            #expect(response.object["errors"]?[0]?["code"] == .string("SHUTTING_DOWN"))
        }
        #expect(relay.sentCount == 0)
    }
}

/// A store that reports one tenant as disabled.
struct DisablingStore: ForwardingPushStore {
    let base: MemoryStore
    let disabled: Tenant

    func tenant(id: String) async throws -> Tenant? { id == disabled.id ? disabled : try await base.tenant(id: id) }
}

@Suite(.timeLimit(.minutes(1)))
struct NativeAPIEdgeTests {
    @Test func anIdAskedForTwiceIsAnsweredOnce() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(TestRelay.expoToken)","body":"x"}]}"#)
            let id = try #require(response.json?["data"]?[0]?["id"]?.stringValue)
            let native = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":["\#(id)","\#(id)"]}"#)
            #expect(native.status == .ok)
            #expect(native.json?["data"]?.objectValue?.count == 1)
            let expo = try await client.post(
                "/--/api/v2/push/getReceipts", key: relay.key, json: #"{"ids":["\#(id)","\#(id)"]}"#)
            #expect(expo.status == .ok)
        }
    }

    @Test func aRequestLargerThanTheBurstIsRefusedAsInvalid() async throws {
        let relay = try await TestRelay(
            limits: RateLimits(ratePerSecond: 1, burst: 3, dailyQuota: 100, perDevicePerMinute: 30))
        let four = Array(repeating: "\"\(TestRelay.expoToken)\"", count: 4).joined(separator: ",")
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":[\#(four)],"body":"x"}]}"#)
            #expect(response.status == .badRequest)
            #expect(response.object["errors"]?[0]?["message"]?.stringValue?.contains("burst of 3") == true)
        }
        #expect(relay.sentCount == 0)
    }
}

/// Revocation and disabling reach requests once the authenticator's short cache expires.
@Suite(.timeLimit(.minutes(1)))
struct KeyLifecycleTests {
    @Test func revokedKeysAndDisabledTenantsAreRefusedWithinTheCacheLifetime() async throws {
        let store = MemoryStore()
        let (tenant, key) = try await TestRelay.addTenant(to: store, name: "acme")
        let clock = ManualClock()
        let relay = Relay(store: store, senders: [:], clock: .manual(clock))
        let body = #"{"messages":[{"to":"\#(TestRelay.expoToken)","body":"x"}]}"#
        try await buildApplication(RelayApplicationParts(relay: relay)).test(.router) { client in
            #expect(try await client.post("/v1/push", key: key, json: body).status == .ok)

            var disabled = tenant
            disabled.disabled = true
            try await store.updateTenant(disabled)
            clock.advance(by: Authenticator.cacheLifetime + .seconds(1))
            #expect(try await client.post("/v1/push", key: key, json: body).status == .forbidden)

            try await store.updateTenant(tenant)
            var record = try #require(try await store.key(id: String(key.dropFirst(4).prefix(16))))
            record.revokedAt = clock.date
            try await store.updateKey(record)
            clock.advance(by: Authenticator.cacheLifetime + .seconds(1))
            #expect(try await client.post("/v1/push", key: key, json: body).status == .unauthorized)
        }
    }
}
