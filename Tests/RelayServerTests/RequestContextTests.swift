import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Metrics
import MetricsTestKit
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The typed contexts of the authenticated route groups still share what the responder reads after the handler: the
/// route template the router matched (counted and logged, never the raw path, which may hold a key).
@Suite(.timeLimit(.minutes(1)))
struct RequestContextTests {
    @Test func routeTemplatesOfAuthenticatedRoutesReachTheResponder() async throws {
        let metrics = TestMetrics()
        try await withMetricsFactory(metrics) {
            let relay = try await TestRelay()
            let fixture = try await AdminFixture()
            try await relay.application.test(.router) { client in
                #expect(try await client.post("/v1/push", key: relay.key, json: AdminFixture.pushBody).status == .ok)
                let inPath = try await client.post(
                    "/t/\(relay.key)/api/notification/push-relay/send", key: nil,
                    json: #"{"to":"\#(TestRelay.apnsToken)","title":"t","body":"b"}"#)
                #expect(inPath.status == .ok)
            }
            try await fixture.application.test(.router) { client in
                let uri = "/admin/v1/tenants/\(fixture.tenant.id)"
                let shown = try await client.admin(.get, uri, token: fixture.adminToken)
                #expect(shown.status == .ok)
            }
            @Sendable func requests(_ route: String, _ status: String) -> Int64 {
                metrics.counterTotal(
                    label: "relay_http_requests_total", dimensions: [("route", route), ("status", status)])
            }
            #expect(requests("/v1/push", "200") == 1)
            #expect(requests("/t/{key}/api/notification/push-relay/send", "200") == 1)
            #expect(requests("/admin/v1/tenants/{id}", "200") == 1)
        }
    }
}
