import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import RelayCore
import RelayProviders
import RelayStore
import Synchronization

@testable import RelayApplication
@testable import RelayServer

/// A sender that answers from a script chosen by token prefix and records what it was asked to send.
final class ScriptedSender: PushSender, SinglePushSender {
    let provider: Provider
    private let sent = Mutex<[ResolvedPush]>([])
    /// When set, every send waits until the gate opens.
    let gate: Gate?

    init(_ provider: Provider, gate: Gate? = nil) {
        self.provider = provider
        self.gate = gate
    }

    var sentPushes: [ResolvedPush] { sent.withLock { $0 } }

    func send(_ pushes: [ResolvedPush]) async -> [DeliveryReport] {
        var reports: [DeliveryReport] = []
        for push in pushes { reports.append(await send(push)) }
        return reports
    }

    func send(_ push: ResolvedPush) async -> DeliveryReport {
        sent.withLock { $0.append(push) }
        await gate?.wait()
        let token = push.provider == .expo ? String(push.token.dropFirst("ExponentPushToken[".count)) : push.token
        if token.hasPrefix("0410") {
            return DeliveryReport(
                outcome: .tokenInvalid(.deviceNotRegistered, reason: "Unregistered", since: nil), attempts: 1,
                upstreamStatus: 410)
        }
        if token.hasPrefix("0503") {
            return DeliveryReport(
                outcome: .unavailable(reason: "ServiceUnavailable", retryAfter: .seconds(30)), attempts: 3,
                upstreamStatus: 503)
        }
        if token.hasPrefix("0403") {
            return DeliveryReport(
                outcome: .configurationError(reason: "DeviceTokenNotForTopic"), attempts: 1, upstreamStatus: 400)
        }
        if token.hasPrefix("0401") {
            return DeliveryReport(
                outcome: .configurationError(reason: "InvalidProviderToken"), attempts: 1, upstreamStatus: 403)
        }
        if token.hasPrefix("0413") {
            return DeliveryReport(
                outcome: .rejected(.messageTooBig, reason: "PayloadTooLarge"), attempts: 1, upstreamStatus: 413)
        }
        if push.provider == .expo, token.hasPrefix("ticket-") {
            // Expo accepted it: the ticket is ok, the outcome comes with its receipt (ticket id: the token's inside).
            return DeliveryReport(
                outcome: .delivered(providerMessageID: String(token.dropLast())), attempts: 1, upstreamStatus: 200,
                receiptPending: true
            )
        }
        return DeliveryReport(
            outcome: .delivered(providerMessageID: "msg-\(push.token.suffix(6))"), attempts: 1, upstreamStatus: 200)
    }
}

/// Holds senders until the test opens it.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let open = state.withLock { state in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Sends from now on wait again until the next ``open()``.
    func close() { state.withLock { $0.open = false } }
}

/// Keeps every log line, for assertions about what is (not) logged.
final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var logger: Logger {
        var logger = Logger(label: "test") { _ in CapturingHandler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    struct CapturingHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.append("\(event.level) \(event.message) \(merged)")
        }
    }
}

/// A relay over a memory store and scripted senders, with one tenant and key.
struct TestRelay {
    let store = MemoryStore()
    let senders: [Provider: ScriptedSender]
    let relay: Relay
    let logs = LogCapture()
    var tenant: Tenant
    var key: String

    static let apnsToken = String(repeating: "ab", count: 32)
    static let fcmToken = "fcm:" + String(repeating: "Zx9_", count: 30)
    static let expoToken = "ExponentPushToken[demo-ok]"
    /// An Expo token whose push Expo accepts with ticket `ticket-<name>`: its outcome waits for the receipt.
    static func expoTicketToken(_ name: String) -> String { "ExponentPushToken[ticket-\(name)]" }
    static let deadAPNsToken = "0410" + String(repeating: "ab", count: 30)

    init(
        providers: [Provider] = Provider.allCases,
        limits: RateLimits = RateLimits(ratePerSecond: 100, burst: 200, dailyQuota: 10_000, perDevicePerMinute: 30),
        allowCriticalAlerts: Bool = true,
        gate: Gate? = nil,
        waitDeadline: Duration = .seconds(5),
        clock: RelayClock = .system
    ) async throws {
        senders = Dictionary(uniqueKeysWithValues: providers.map { ($0, ScriptedSender($0, gate: gate)) })
        relay = Relay(
            store: store,
            senders: senders.mapValues { $0 as any PushSender },
            settings: RelaySettings(waitDeadline: waitDeadline),
            clock: clock
        )
        (tenant, key) = try await Self.addTenant(
            to: store, name: "acme", limits: limits, allowCriticalAlerts: allowCriticalAlerts)
    }

    static func addTenant(
        to store: any PushStore, name: String, limits: RateLimits = .init(), allowCriticalAlerts: Bool = false
    ) async throws -> (Tenant, String) {
        let tenant = Tenant(name: name, limits: limits, allowCriticalAlerts: allowCriticalAlerts)
        try await store.createTenant(tenant)
        let issued = TenantKeys.issue()
        try await store.createKey(TenantKeyRecord(id: issued.id, tenantID: tenant.id, secretHash: issued.secretHash))
        return (tenant, issued.key)
    }

    var application: some ApplicationProtocol {
        get throws { try buildApplication(RelayApplicationParts(relay: relay, logger: logs.logger)) }
    }

    var sentCount: Int { senders.values.reduce(0) { $0 + $1.sentPushes.count } }
}

extension TestClientProtocol {
    /// POSTs JSON text with a bearer key.
    func post(_ uri: String, key: String?, json: String, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let key { headers[.authorization] = "Bearer \(key)" }
        for field in extra { headers[field.name] = field.value }
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: json))
    }
}

extension TestResponse {
    /// The body as JSON.
    var json: JSONValue? { JSONValue.decode(body.readableBytesView) }
    var object: [String: JSONValue] { json?.objectValue ?? [:] }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? { objectValue?[key] }
    subscript(index: Int) -> JSONValue? {
        if case .array(let items) = self, items.indices.contains(index) { return items[index] }
        return nil
    }
}
