import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// One admin route, with what an admin's request succeeds with.
struct AdminRoute: Sendable, CustomTestStringConvertible {
    var method: HTTPRequest.Method
    /// `{tenant}` and `{key}` stand for the fixture tenant's id and key id.
    var path: String
    var body: String? = nil
    var writes: Bool
    var success: HTTPResponse.Status

    var testDescription: String { "\(method.rawValue) \(path)" }

    func uri(in fixture: AdminFixture) -> String {
        path.replacingOccurrences(of: "{tenant}", with: fixture.tenant.id)
            .replacingOccurrences(of: "{key}", with: fixture.tenantKeyID)
    }

    /// Every route of `/admin/v1`.
    static let all: [AdminRoute] = [
        AdminRoute(method: .get, path: "/admin/v1/tenants", writes: false, success: .ok),
        AdminRoute(
            method: .post, path: "/admin/v1/tenants", body: #"{"name":"beta"}"#, writes: true, success: .created),
        AdminRoute(method: .get, path: "/admin/v1/tenants/{tenant}", writes: false, success: .ok),
        AdminRoute(
            method: .patch, path: "/admin/v1/tenants/{tenant}", body: #"{"note":"x"}"#, writes: true, success: .ok),
        AdminRoute(method: .post, path: "/admin/v1/tenants/{tenant}/disable", writes: true, success: .ok),
        AdminRoute(method: .post, path: "/admin/v1/tenants/{tenant}/enable", writes: true, success: .ok),
        AdminRoute(method: .delete, path: "/admin/v1/tenants/{tenant}", writes: true, success: .ok),
        AdminRoute(method: .get, path: "/admin/v1/tenants/{tenant}/keys", writes: false, success: .ok),
        AdminRoute(method: .post, path: "/admin/v1/tenants/{tenant}/keys", writes: true, success: .created),
        AdminRoute(
            method: .post, path: "/admin/v1/tenants/{tenant}/keys/{key}/rotate", writes: true, success: .created),
        AdminRoute(method: .delete, path: "/admin/v1/tenants/{tenant}/keys/{key}", writes: true, success: .ok),
        AdminRoute(method: .get, path: "/admin/v1/tenants/{tenant}/usage", writes: false, success: .ok),
        AdminRoute(method: .get, path: "/admin/v1/audit", writes: false, success: .ok),
        AdminRoute(method: .get, path: "/admin/v1/keys/{key}", writes: false, success: .ok),
        AdminRoute(method: .get, path: "/admin/v1/operators", writes: false, success: .ok),
        AdminRoute(
            method: .post, path: "/admin/v1/operators", body: #"{"name":"dave","role":"auditor"}"#, writes: true,
            success: .created),
        AdminRoute(method: .delete, path: "/admin/v1/operators/carol", writes: true, success: .ok),
    ]
}

@Suite(.timeLimit(.minutes(1)))
struct AdminAPIRoleTests {
    /// Each route × {no token, a tenant key, a forged or revoked operator token, auditor, admin}.
    @Test(arguments: AdminRoute.all)
    func everyRouteChecksTokenAndRole(_ route: AdminRoute) async throws {
        let fixture = try await AdminFixture()
        let uri = route.uri(in: fixture)
        // The operator id of alice's token with another secret.
        let forged = String(fixture.adminToken.prefix(21)) + String(repeating: "A", count: 43)
        try await fixture.application.test(.router) { client in
            for token in [nil, fixture.tenantKey, forged, fixture.revokedToken, "pro_nonsense"] {
                let refused = try await client.admin(route.method, uri, token: token, json: route.body)
                #expect(refused.status == .unauthorized, "\(token ?? "no token")")
                #expect(refused.errorCode == "UNAUTHORIZED")
                #expect(refused.headers[.wwwAuthenticate] == "Bearer")
            }

            let tenantsBefore = try await fixture.store.tenants()
            let keysBefore = try await fixture.store.keys(tenantID: fixture.tenant.id)
            let auditor = try await client.admin(route.method, uri, token: fixture.auditorToken, json: route.body)
            if route.writes {
                #expect(auditor.status == .forbidden)
                #expect(auditor.errorCode == "FORBIDDEN")
                #expect(try await fixture.store.tenants() == tenantsBefore)
                #expect(try await fixture.store.keys(tenantID: fixture.tenant.id) == keysBefore)
            } else {
                #expect(auditor.status == route.success)
            }

            let admin = try await client.admin(route.method, uri, token: fixture.adminToken, json: route.body)
            #expect(admin.status == route.success, "\(admin.text)")
            #expect(admin.headers[.contentType]?.hasPrefix("application/json") == true)
        }
    }

    @Test func refusedWritesAreAuditedWithTheirActor() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            let uri = "/admin/v1/tenants/\(fixture.tenant.id)/disable"
            #expect(try await client.admin(.post, uri, token: fixture.auditorToken).status == .forbidden)
            #expect(try await client.admin(.post, uri, token: fixture.tenantKey).status == .unauthorized)
            let page = try await client.admin(.get, "/admin/v1/audit?event=refused", token: fixture.adminToken)
            let records = page.json?["data"]?.elements ?? []
            let forbidden = try #require(records.first { $0["outcome"] == .string("FORBIDDEN") })
            #expect(forbidden["actor"] == .string("operator:bob"))
            let unauthorized = try #require(records.first { $0["outcome"] == .string("UNAUTHORIZED") })
            #expect(unauthorized["actor"] == nil)
            // Nothing was disabled, and no admin record was written.
            #expect(try await fixture.store.tenant(id: fixture.tenant.id)?.disabled == false)
            let admin = try await client.admin(.get, "/admin/v1/audit?event=admin", token: fixture.auditorToken)
            #expect(admin.json?["data"]?.elements.isEmpty == true)
        }
    }

    @Test func tenantKeysDoNotOpenTheAdminAPIAndOperatorTokensDoNotPush() async throws {
        let fixture = try await AdminFixture()
        try await fixture.application.test(.router) { client in
            #expect(
                try await client.post("/v1/push", key: fixture.adminToken, json: AdminFixture.pushBody).status
                    == .unauthorized)
            #expect(
                try await client.post("/v1/push", key: fixture.tenantKey, json: AdminFixture.pushBody).status == .ok)
            let basic = try await client.execute(
                uri: "/admin/v1/tenants", method: .get, headers: [.authorization: "Basic \(fixture.adminToken)"]
            )
            #expect(basic.status == .unauthorized)
        }
    }
}
