import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayProviders
import RelayStore

@testable import RelayApplication
@testable import RelayServer

/// A relay for the admin API's tests: a memory store, scripted senders, a clock the test moves (the relay's, so that
/// the tenant authenticator's 5 s cache can be passed without sleeping), one tenant `acme` with one key, and three
/// operators: `alice` (admin), `bob` (auditor) and `carol` (an admin whose token is revoked).
///
/// The clock starts at the real time, because the admin API stamps keys with the real time and the relay checks
/// their expiry with this clock.
struct AdminFixture {
    let store = MemoryStore()
    let clock = ManualClock(date: Date())
    let relay: Relay
    let tenant: Tenant
    let tenantKey: String
    let adminToken: String
    let auditorToken: String
    let revokedToken: String

    init() async throws {
        let clock = self.clock
        relay = Relay(
            store: store,
            senders: Dictionary(
                uniqueKeysWithValues: Provider.allCases.map { ($0, ScriptedSender($0) as any PushSender) }),
            settings: RelaySettings(waitDeadline: .seconds(5)),
            clock: .manual(clock)
        )
        (tenant, tenantKey) = try await TestRelay.addTenant(to: store, name: "acme")
        adminToken = try await Self.addOperator(to: store, name: "alice", role: .admin)
        auditorToken = try await Self.addOperator(to: store, name: "bob", role: .auditor)
        revokedToken = try await Self.addOperator(to: store, name: "carol", role: .admin, revoked: true)
    }

    static func addOperator(to store: MemoryStore, name: String, role: OperatorRole, revoked: Bool = false) async throws
        -> String
    {
        let issued = OperatorTokens.issue()
        try await store.createOperator(
            OperatorRecord(
                id: issued.id, name: name, role: role, secretHash: issued.secretHash, revokedAt: revoked ? Date() : nil)
        )
        return issued.key
    }

    var application: some ApplicationProtocol {
        get throws { try buildApplication(RelayApplicationParts(relay: relay)) }
    }

    /// The key id of the fixture tenant's key.
    var tenantKeyID: String { TenantKeys.keyID(of: tenantKey) ?? "" }

    /// Moves the relay past the tenant authenticator's cache, so that the next request sees the store's state.
    func passAuthenticatorCache() { clock.advance(by: Authenticator.cacheLifetime + .seconds(1)) }

    static let pushBody = #"{"messages":[{"to":"\#(TestRelay.apnsToken)","title":"t","body":"b"}]}"#
}

extension TestClientProtocol {
    /// An admin request with an operator token (or any other bearer value), and a JSON body when given.
    func admin(_ method: HTTPRequest.Method, _ uri: String, token: String?, json: String? = nil) async throws
        -> TestResponse
    {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if json != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0) })
    }
}

extension TestResponse {
    /// The first error's code.
    var errorCode: String? { json?["errors"]?[0]?["code"]?.stringValue }

    /// The paths of every error, as a set.
    var errorPaths: Set<String> {
        guard case .array(let errors)? = json?["errors"] else { return [] }
        return Set(errors.compactMap { $0["path"]?.stringValue })
    }

    /// The body as text.
    var text: String { String(buffer: body) }
}

extension JSONValue {
    /// The elements of an array (empty for anything else).
    var elements: [JSONValue] {
        if case .array(let items) = self { return items }
        return []
    }
}
