import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import RelayCore
import RelayProviders
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Several apps through the HTTP APIs: a message's `app`, an unknown one (400), one the tenant may not use
/// (`AppNotAllowed`, nothing sent), the tenant's default app on the native and Expo-compatible routes, receipts.
@Suite(.timeLimit(.minutes(1)))
struct AppsAPITests {
    /// A relay whose default app and `beta` each have their own scripted senders, and a tenant with `apps`.
    struct Harness {
        let store = MemoryStore()
        let main = Dictionary(uniqueKeysWithValues: Provider.allCases.map { ($0, ScriptedSender($0)) })
        let beta = Dictionary(uniqueKeysWithValues: Provider.allCases.map { ($0, ScriptedSender($0)) })
        let relay: Relay
        let key: String

        init(apps: [String], defaultApp: String) async throws {
            relay = Relay(
                store: store,
                senders: main.mapValues { $0 as any PushSender },
                apps: ["beta": beta.mapValues { $0 as any PushSender }],
                settings: RelaySettings(apps: ["default", "beta"])
            )
            let tenant = Tenant(name: "acme", apps: apps, defaultApp: defaultApp)
            try await store.createTenant(tenant)
            let issued = TenantKeys.issue()
            try await store.createKey(
                TenantKeyRecord(id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash))
            key = issued.key
        }

        var application: some ApplicationProtocol {
            get throws {
                try buildApplication(
                    RelayApplicationParts(relay: relay, logger: Logger(label: "apps") { _ in SwiftLogNoOpLogHandler() })
                )
            }
        }

        var sent: (main: Int, beta: Int) {
            (main.values.reduce(0) { $0 + $1.sentPushes.count }, beta.values.reduce(0) { $0 + $1.sentPushes.count })
        }
    }

    @Test func aMessageGoesWithItsAppAndTheReceiptSaysWhich() async throws {
        let harness = try await Harness(apps: ["default", "beta"], defaultApp: "default")
        try await harness.application.test(.router) { client in
            let body = #"""
                {"messages":[{"to":"\#(TestRelay.apnsToken)","body":"beta","app":"beta"},
                             {"to":"\#(TestRelay.apnsToken)","body":"default"}]}
                """#
            let response = try await client.post("/v1/push", key: harness.key, json: body)
            #expect(response.status == .ok)
            guard case .array(let tickets)? = response.json?["data"] else {
                Issue.record("no tickets: \(String(describing: response.json))")
                return
            }
            #expect(tickets.map { $0["status"] } == [.string("ok"), .string("ok")])
            let ids = tickets.compactMap { $0["id"]?.stringValue }
            let receipts = try await client.post(
                "/v1/receipts", key: harness.key,
                json: JSONValue.object(["ids": .array(ids.map(JSONValue.string))]).encodedString())
            #expect(ids.map { receipts.json?["data"]?[$0]?["app"] } == [.string("beta"), .string("default")])
        }
        #expect(harness.beta[.apns]?.sentPushes.map(\.message.body) == ["beta"])
        #expect(harness.main[.apns]?.sentPushes.map(\.message.body) == ["default"])
    }

    @Test func anUnknownAppIsA400NamingTheFieldAndNothingIsSent() async throws {
        let harness = try await Harness(apps: ["default", "beta"], defaultApp: "default")
        try await harness.application.test(.router) { client in
            let body = #"""
                {"messages":[{"to":"\#(TestRelay.apnsToken)","body":"fine"},
                             {"to":"\#(TestRelay.apnsToken)","body":"typo","app":"gamma"}]}
                """#
            let response = try await client.post("/v1/push", key: harness.key, json: body)
            #expect(response.status == .badRequest)
            #expect(response.json?["errors"]?[0]?["path"] == .string("messages[1].app"))
            #expect(response.json?["errors"]?[0]?["code"] == .string("VALIDATION_ERROR"))
        }
        #expect(harness.sent == (0, 0))
    }

    @Test func anAppTheTenantMayNotUseIsAnErrorTicketAndNothingIsSent() async throws {
        let harness = try await Harness(apps: ["default"], defaultApp: "default")
        try await harness.application.test(.router) { client in
            let body = #"""
                {"messages":[{"to":"\#(TestRelay.apnsToken)","body":"beta","app":"beta"},
                             {"to":"\#(TestRelay.fcmToken)","body":"default"}]}
                """#
            let response = try await client.post("/v1/push", key: harness.key, json: body)
            #expect(response.status == .ok)
            #expect(response.json?["data"]?[0]?["status"] == .string("error"))
            #expect(response.json?["data"]?[0]?["details"]?["error"] == .string("AppNotAllowed"))
            #expect(response.json?["data"]?[1]?["status"] == .string("ok"))
        }
        #expect(harness.sent == (1, 0), "the refused notification went nowhere, the other through the default app")
    }

    @Test func theExpoCompatibleRouteUsesTheTenantsDefaultApp() async throws {
        let harness = try await Harness(apps: ["beta"], defaultApp: "beta")
        try await harness.application.test(.router) { client in
            let response = try await client.post(
                "/--/api/v2/push/send", key: harness.key, json: #"{"to":"\#(TestRelay.expoToken)","body":"hi"}"#)
            #expect(response.status == .ok)
            #expect(response.json?["data"]?["status"] == .string("ok"))
            // Native, without `app`: the default app too.
            let native = try await client.post(
                "/v1/push", key: harness.key, json: #"{"messages":[{"to":"\#(TestRelay.apnsToken)","body":"x"}]}"#)
            #expect(native.json?["data"]?[0]?["status"] == .string("ok"))
        }
        #expect(harness.beta[.expo]?.sentPushes.count == 1 && harness.beta[.apns]?.sentPushes.count == 1)
        #expect(harness.sent.main == 0)
    }
}
