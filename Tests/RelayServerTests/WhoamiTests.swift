import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RelayCore
import RelayProviders
import RelaySimulator
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// `GET /v1/whoami` (and `/t/<key>/v1/whoami`): the caller's tenant, key, limits with what is left of them, and apps,
/// never the secret; a bad key is 401, and it takes from the lookup budget of receipts and dry runs.
@Suite(.timeLimit(.minutes(1)))
struct WhoamiTests {
    /// 2030-01-01T12:00:00Z.
    static let noon = Date(timeIntervalSince1970: 1_893_499_200)

    /// Two apps built from a configuration file as `pushrelay serve` builds them: the default app with APNs
    /// (production), FCM and Expo, and `beta` with APNs (sandbox, its own topic) and FCM; no upstream is called.
    static func relayConf(credentials: SimulatorCredentials, files: SimulatorCredentials.Files) -> String {
        func string(_ value: String) -> String { SimulatorCredentials.tomlString(value) }
        return """
            [store]
            url = "sqlite://:memory:"

            [limits]
            critical_per_device_per_minute = 4

            [android]
            critical_channel_id = "pages"

            [apns]
            team_id = \(string(credentials.apnsTeamID))
            key_id = \(string(credentials.apnsKeyID))
            key_file = \(string(files.apnsKey))
            topic = "com.example.oncall"

            [fcm]
            service_account_file = \(string(files.serviceAccount))

            [expo]

            [apps.beta.apns]
            team_id = \(string(credentials.apnsTeamID))
            key_id = \(string(credentials.apnsKeyID))
            key_file = \(string(files.apnsKey))
            topic = "com.example.oncall.beta"
            environment = "sandbox"

            [apps.beta.fcm]
            service_account_file = \(string(files.serviceAccount))

            [audit]
            instance = "whoami-test"

            """
    }

    @Test func aTenantWithTwoAppsAndAnExpiringKeySeesItsSetUpAndNeverTheSecret() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("relay-whoami-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let credentials = try SimulatorCredentials()
        let files = try credentials.write(to: directory + "/keys", tokenURI: "https://oauth2.invalid/token")
        let path = directory + "/relay.conf"
        try Self.relayConf(credentials: credentials, files: files).write(
            toFile: path, atomically: true, encoding: .utf8)
        let configuration = try RelayConfiguration.load(path: path, environment: [:])
        let store = try await RelayAssembly.openStore(configuration)
        let clock = ManualClock(date: Self.noon)
        let assembly = try RelayAssembly.make(
            configuration: configuration, store: store,
            logger: Logger(label: "whoami") { _ in SwiftLogNoOpLogHandler() },
            clock: .manual(clock))

        // Beta is the default app; Expo is not among the tenant's providers, so the default app shows APNs and FCM.
        let tenant = Tenant(
            name: "acme",
            limits: RateLimits(
                ratePerSecond: 5, burst: 20, dailyQuota: 1_000, perDevicePerMinute: 12, criticalReservePerHour: 30),
            allowCriticalAlerts: true,
            allowedProviders: [.apns, .fcm],
            apps: ["default", "beta"],
            defaultApp: "beta"
        )
        try await store.createTenant(tenant)
        let issued = TenantKeys.issue()
        let created = Date(timeIntervalSince1970: 1_893_456_000)  // 2030-01-01T00:00:00Z
        let expires = Date(timeIntervalSince1970: 1_896_134_400)  // 2030-02-01T00:00:00Z
        try await store.createKey(
            TenantKeyRecord(
                id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash, createdAt: created,
                expiresAt: expires))
        let secret = try #require(TenantKeys.parse(issued.key)?.secret)

        let application = try buildApplication(
            RelayApplicationParts(
                relay: assembly.relay, services: assembly.services.filter { $0 is ClientShutdownService }))
        try await application.test(.router) { client async throws in
            let response = try await client.whoami(key: issued.key)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            let expected = JSONValue.object([
                "tenant": .object(["id": .string(tenant.id), "name": .string("acme")]),
                "key": .object([
                    "id": .string(issued.id), "createdAt": .string("2030-01-01T00:00:00.000Z"),
                    "expiresAt": .string("2030-02-01T00:00:00.000Z"),
                ]),
                "criticalAlerts": .object([
                    "allowed": .bool(true), "channel": .string("pages"), "reservePerHour": .int(30),
                    "reserveLeftThisHour": .int(30), "perDevicePerMinute": .int(4),
                ]),
                "limits": .object([
                    "ratePerSecond": .double(5), "burst": .int(20), "dailyQuota": .int(1_000),
                    "perDevicePerMinute": .int(12), "criticalReservePerHour": .int(30),
                ]),
                "left": .object(["bucket": .int(20), "dailyQuota": .int(1_000), "criticalReserve": .int(30)]),
                "apps": .array([
                    .object([
                        "name": .string("beta"), "default": .bool(true),
                        "providers": .array([.string("apns"), .string("fcm")]),
                        "apns": .object([
                            "topic": .string("com.example.oncall.beta"), "environment": .string("sandbox"),
                        ]),
                        "fcm": .object(["projectId": .string(credentials.fcmProjectID)]),
                    ]),
                    .object([
                        "name": .string("default"), "default": .bool(false),
                        "providers": .array([.string("apns"), .string("fcm")]),
                        "apns": .object([
                            "topic": .string("com.example.oncall"), "environment": .string("production"),
                        ]),
                        "fcm": .object(["projectId": .string(credentials.fcmProjectID)]),
                    ]),
                ]),
                "relayVersion": .string(RelayVersion.current),
            ])
            #expect(response.json == expected, "\(String(buffer: response.body))")

            // The same through the key in the path, and neither answer holds the key or its secret.
            let inPath = try await client.execute(uri: "/t/\(issued.key)/v1/whoami", method: .get)
            #expect(inPath.status == .ok)
            #expect(inPath.json == expected)
            for body in [String(buffer: response.body), String(buffer: inPath.body)] {
                #expect(!body.contains(secret))
                #expect(!body.contains(issued.key))
            }
        }
    }

    /// A quota spent by ordinary pushes, then a critical alert beyond it: the quota's rest is below zero, the
    /// reserve one short, and a relay that has not seen the tenant yet reads the same quota from the store.
    @Test func aSpentQuotaShowsZeroOrBelowAndTheReserveTaken() async throws {
        let store = MemoryStore()
        let clock = ManualClock(date: Self.noon)
        let limits = RateLimits(
            ratePerSecond: 100, burst: 10, dailyQuota: 2, perDevicePerMinute: 30, criticalReservePerHour: 5)
        let (tenant, key) = try await TestRelay.addTenant(
            to: store, name: "acme", limits: limits, allowCriticalAlerts: true)
        let first = QuotaRelay(store: store, clock: clock)
        try await first.application.test(.router) { client async throws in
            #expect(try await client.push(key: key).status == .ok)
            #expect(try await client.push(key: key).status == .ok)
            let spent = try await client.whoami(key: key)
            #expect(spent.json?["left"]?["dailyQuota"] == .int(0))
            #expect(spent.json?["left"]?["bucket"] == .int(8))
            #expect(spent.json?["left"]?["criticalReserve"] == .int(5))
            #expect(try await client.push(key: key).isDailyQuotaRefusal)

            let critical = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"Sev1","isCriticalAlert":true}]}"#
            let page = try await client.push(key: key, json: critical)
            #expect(page.json?["data"]?[0]?["status"] == .string("ok"), "\(String(buffer: page.body))")
            let after = try await client.whoami(key: key)
            #expect(after.json?["left"]?["dailyQuota"] == .int(-1), "the critical alert went beyond the quota")
            #expect(after.json?["left"]?["criticalReserve"] == .int(4))
            #expect(after.json?["criticalAlerts"]?["reserveLeftThisHour"] == .int(4))
            #expect(after.json?["criticalAlerts"]?["reservePerHour"] == .int(5))
        }

        // Another relay on the same store, which has admitted nothing for the tenant: a full bucket, and the quota
        // as the store counts it.
        let second = QuotaRelay(store: store, clock: clock)
        try await second.application.test(.router) { client async throws in
            let fresh = try await client.whoami(key: key)
            #expect(fresh.json?["left"]?["bucket"] == .int(10))
            #expect(fresh.json?["left"]?["dailyQuota"] == .int(-1))
            #expect(fresh.json?["left"]?["criticalReserve"] == .int(4))
        }
        #expect(try await store.quotaUsed(tenantID: tenant.id, on: Self.noon) == 3)

        // The next hour, the reserve is whole again; the next day, the quota.
        clock.advance(by: .seconds(3600))
        try await second.application.test(.router) { client async throws in
            #expect(try await client.whoami(key: key).json?["left"]?["criticalReserve"] == .int(5))
        }
        clock.advance(by: .seconds(12 * 3600))
        try await second.application.test(.router) { client async throws in
            #expect(try await client.whoami(key: key).json?["left"]?["dailyQuota"] == .int(2))
        }
    }

    @Test func aBadOrMissingKeyIs401() async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client async throws in
            let wrong = try await client.whoami(
                key: "prk_\(String(repeating: "a", count: 16))_\(String(repeating: "b", count: 43))")
            #expect(wrong.status == .unauthorized)
            #expect(wrong.json?["tenant"] == nil)
            #expect(try await client.whoami(key: nil).status == .unauthorized)
            #expect(try await client.whoami(key: "not-a-key").status == .unauthorized)
            let inPath = try await client.execute(uri: "/t/prk_nope_nope/v1/whoami", method: .get)
            #expect(inPath.status == .unauthorized)
        }
    }

    /// Whoami, receipt lookups and dry runs share one budget (60 at once, 2 a second): the 61st at one instant is
    /// 429 with `Retry-After`, as the receipts route answers, and pushes are untouched.
    @Test func theLookupBudgetIsSharedAndOverItIs429() async throws {
        let clock = ManualClock(date: Self.noon)
        let relay = try await TestRelay(clock: .manual(clock))
        try await relay.application.test(.router) { client async throws in
            for _ in 0..<(RateLimiterRegistry.receiptLookups.burst - 1) {
                #expect(try await client.whoami(key: relay.key).status == .ok)
            }
            let receipts = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":["r1"]}"#)
            #expect(receipts.status == .ok, "the 60th lookup, a receipt lookup")
            let over = try await client.whoami(key: relay.key)
            #expect(over.status == .tooManyRequests)
            #expect(over.json?["errors"]?[0]?["code"] == .string("TOO_MANY_REQUESTS"))
            #expect(over.headers[.retryAfter] == "1")
            let receiptsOver = try await client.post("/v1/receipts", key: relay.key, json: #"{"ids":["r1"]}"#)
            #expect(receiptsOver.status == .tooManyRequests)
            let push = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#)
            #expect(push.status == .ok, "pushes have their own bucket")
            clock.advance(by: .seconds(1))
            #expect(try await client.whoami(key: relay.key).status == .ok)
        }
    }

    /// Senders that do not tell their settings (as in tests) still give the providers; the tenant's own critical
    /// channel wins over the relay's.
    @Test func theTenantsOwnCriticalChannelAndAppsWithoutSettings() async throws {
        let relay = try await TestRelay(providers: [.apns, .expo])
        var tenant = relay.tenant
        tenant.criticalChannel = "acme-pages"
        tenant.allowCriticalAlerts = false
        try await relay.store.updateTenant(tenant)
        try await relay.application.test(.router) { client async throws in
            let response = try await client.whoami(key: relay.key)
            #expect(response.json?["criticalAlerts"]?["channel"] == .string("acme-pages"))
            #expect(response.json?["criticalAlerts"]?["allowed"] == .bool(false))
            #expect(response.json?["key"]?["expiresAt"] == .null)
            #expect(
                response.json?["apps"]
                    == .array([
                        .object([
                            "name": .string("default"), "default": .bool(true),
                            "providers": .array([.string("apns"), .string("expo")]),
                        ])
                    ]))
        }
    }
}

extension TestClientProtocol {
    /// `GET /v1/whoami` with a bearer key.
    func whoami(key: String?) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let key { headers[.authorization] = "Bearer \(key)" }
        return try await execute(uri: "/v1/whoami", method: .get, headers: headers)
    }
}
