import ArgumentParser
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayStore
import Synchronization
import Testing

@testable import RelayApplication
@testable import RelayServer
@testable import pushrelay

/// One step of tenant administration, which either front end can take: the CLI as a command line, the admin API as
/// a request. Tenants are named by name; keys by the order they were issued in this run.
enum AdminStep: Sendable, CustomStringConvertible {
    case create(String, TenantFields)
    case update(String, TenantFields)
    case show(String)
    case list(includeDeleted: Bool)
    case disable(String)
    case enable(String)
    case delete(String)
    case issueKey(tenant: String, expiresInDays: Int? = nil)
    case listKeys(tenant: String)
    case rotateKey(tenant: String, KeyReference, overlapDays: Int? = nil)
    case revokeKey(tenant: String, KeyReference)
    case usage(tenant: String, days: Int? = nil)
    /// Not a front end's: counts written into the store, for `usage` to find.
    case recordUsage(tenant: String, Provider, UsageCounts)

    var description: String {
        switch self {
        case .create(let name, let fields): "create \(name) \(fields)"
        case .update(let name, let fields): "update \(name) \(fields)"
        case .show(let name): "show \(name)"
        case .list(let includeDeleted): "list\(includeDeleted ? " --include-deleted" : "")"
        case .disable(let name): "disable \(name)"
        case .enable(let name): "enable \(name)"
        case .delete(let name): "delete \(name)"
        case .issueKey(let tenant, let days):
            "issue a key for \(tenant), expiring in \(days.map(String.init) ?? "never")"
        case .listKeys(let tenant): "list the keys of \(tenant)"
        case .rotateKey(let tenant, let key, let days):
            "rotate \(key) of \(tenant), overlap \(days.map(String.init) ?? "-")"
        case .revokeKey(let tenant, let key): "revoke \(key) of \(tenant)"
        case .usage(let tenant, let days): "usage of \(tenant), \(days.map(String.init) ?? "-") days"
        case .recordUsage(let tenant, let provider, _): "record \(provider) usage of \(tenant)"
        }
    }
}

/// A key as a step names it: the n-th key issued in the run (0 first), by its id or as the whole key, or any text.
enum KeyReference: Sendable, CustomStringConvertible {
    case id(Int)
    case whole(Int)
    case text(String)

    var description: String {
        switch self {
        case .id(let index): "key #\(index) by id"
        case .whole(let index): "key #\(index) as a whole key"
        case .text(let text): "'\(text)'"
        }
    }
}

/// The tenant fields a step gives; `nil` leaves a field out, `.some(nil)` clears it.
struct TenantFields: Sendable, CustomStringConvertible {
    var name: String? = nil
    var rate: Double? = nil
    var burst: Int? = nil
    var dailyQuota: Int? = nil
    var perDevicePerMinute: Int? = nil
    var criticalReservePerHour: Int? = nil
    var allowCriticalAlerts: Bool? = nil
    var allowedProviders: [String]?? = nil
    var criticalChannel: String?? = nil
    var apps: [String]? = nil
    var defaultApp: String? = nil
    var note: String?? = nil

    var description: String { json.encodedString() }

    /// The admin API's body.
    var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if let name { object["name"] = .string(name) }
        if let rate { object["rate"] = .double(rate) }
        if let burst { object["burst"] = .int(Int64(burst)) }
        if let dailyQuota { object["dailyQuota"] = .int(Int64(dailyQuota)) }
        if let perDevicePerMinute { object["perDevicePerMinute"] = .int(Int64(perDevicePerMinute)) }
        if let criticalReservePerHour { object["criticalReservePerHour"] = .int(Int64(criticalReservePerHour)) }
        if let allowCriticalAlerts { object["allowCriticalAlerts"] = .bool(allowCriticalAlerts) }
        if let allowedProviders {
            object["allowedProviders"] = allowedProviders.map { .array($0.map(JSONValue.string)) } ?? .null
        }
        if let criticalChannel { object["criticalChannel"] = criticalChannel.map(JSONValue.string) ?? .null }
        if let apps { object["apps"] = .array(apps.map(JSONValue.string)) }
        if let defaultApp { object["defaultApp"] = .string(defaultApp) }
        if let note { object["note"] = note.map(JSONValue.string) ?? .null }
        return .object(object)
    }

    /// The command line's options; `creating` for `tenant create`, which takes no providers, channel or note.
    func arguments(creating: Bool) -> [String] {
        var arguments: [String] = []
        if let name { arguments += ["--rename", name] }
        if let rate { arguments.append("--rate=\(rate)") }
        if let burst { arguments.append("--burst=\(burst)") }
        if let dailyQuota { arguments.append("--daily-quota=\(dailyQuota)") }
        if let perDevicePerMinute { arguments.append("--per-device-per-minute=\(perDevicePerMinute)") }
        if let criticalReservePerHour { arguments.append("--critical-reserve-per-hour=\(criticalReservePerHour)") }
        if let allowCriticalAlerts {
            arguments +=
                creating
                ? (allowCriticalAlerts ? ["--allow-critical-alerts"] : [])
                : ["--allow-critical-alerts=\(allowCriticalAlerts)"]
        }
        switch allowedProviders {
        case .some(.some(let providers)): arguments += providers.flatMap { ["--allow-provider", $0] }
        case .some(nil): arguments.append("--allow-all-providers")
        case nil: break
        }
        switch criticalChannel {
        case .some(.some(let channel)): arguments += ["--critical-channel", channel]
        case .some(nil): arguments.append("--clear-critical-channel")
        case nil: break
        }
        if let apps { arguments += apps.flatMap { ["--allow-app", $0] } }
        if let defaultApp { arguments += ["--default-app", defaultApp] }
        if let note { arguments += ["--note", note ?? ""] }
        return arguments
    }
}

/// What a front end answered to one step: JSON, the fields it refused (each with its message), or a refusal's
/// message (not found, conflict).
enum AdminAnswer: Sendable, Equatable, CustomStringConvertible {
    case json(JSONValue)
    case invalid([String: String])
    case failed(String)

    var description: String {
        switch self {
        case .json(let value): value.encodedString()
        case .invalid(let fields): "invalid \(fields)"
        case .failed(let message): "failed: \(message)"
        }
    }

    var jsonValue: JSONValue? {
        if case .json(let value) = self { return value }
        return nil
    }
}

/// What both front ends share.
enum AdminFrontEnds {
    /// The relay's apps: `default` and `[apps.beta]`.
    static let apps: Set<String> = ["default", "beta"]
}

/// A front end of tenant administration, run on a store of its own with a clock of its own.
protocol AdminFrontEnd: Sendable {
    var store: MemoryStore { get }
    var clock: StepClock { get }
    /// Takes the steps in order and returns each step's answer.
    func run(_ steps: [AdminStep]) async throws -> [AdminAnswer]
}

/// The clock of a front end: it starts at the same instant for both, and moves one second before each step, so that
/// both runs have the same dates and keys issued one after the other are listed in that order.
final class StepClock: Sendable {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    private let date = Mutex(StepClock.start)

    var now: Date { date.withLock { $0 } }

    func tick() { date.withLock { $0 = $0.addingTimeInterval(1) } }
}

extension AdminFrontEnd {
    /// The store's `admin` audit records as JSON, without what names the front end (actor, chain, request, client).
    func adminRecords() async throws -> [JSONValue] {
        let stored = try await store.auditRecords(matching: AuditFilter(event: .admin), after: 0, limit: 10_000)
        let renderer = AuditRenderer(format: .jsonl)
        return try stored.map { record in
            var object = try #require(JSONValue.decode(Array(renderer.line(for: record.record).utf8))?.objectValue)
            for key in ["actor", "chain", "seq", "link", "requestID", "client"] { object[key] = nil }
            return .object(object)
        }
    }

    /// Takes the steps in order: moves the clock, writes `recordUsage` counts itself, and hands every other step to
    /// `take`, with the keys issued so far.
    func take(_ steps: [AdminStep], _ take: (AdminStep, IssuedKeys) async throws -> AdminAnswer) async throws
        -> [AdminAnswer]
    {
        var keys = IssuedKeys()
        var answers: [AdminAnswer] = []
        for step in steps {
            clock.tick()
            let answer: AdminAnswer
            if case .recordUsage(let tenant, let provider, let counts) = step {
                try await recordUsage(tenant: tenant, provider, counts)
                answer = .json(.null)
            } else {
                answer = try await take(step, keys)
            }
            keys.note(answer)
            answers.append(answer)
        }
        return answers
    }

    /// Writes a `recordUsage` step's counts into the store.
    func recordUsage(tenant name: String, _ provider: Provider, _ counts: UsageCounts) async throws {
        let tenant = try #require(try await store.tenant(named: name))
        let key = UsageKey(tenantID: tenant.id, date: clock.now, provider: provider)
        try await store.commit(StoreBatch(usage: [key: counts]))
    }
}

/// The issued keys of a run, in order, taken from the answers that show them.
struct IssuedKeys {
    private(set) var keys: [String] = []

    mutating func note(_ answer: AdminAnswer) {
        if let key = answer.jsonValue?["key"]?.stringValue { keys.append(key) }
    }

    func reference(_ reference: KeyReference) -> String {
        switch reference {
        case .id(let index): keys.indices.contains(index) ? String(keys[index].dropFirst(4).prefix(16)) : "missing"
        case .whole(let index): keys.indices.contains(index) ? keys[index] : "missing"
        case .text(let text): text
        }
    }
}

// MARK: - The command line

/// Output lines, collected across tasks.
final class OutputLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }
}

/// The CLI: each step a command line, parsed as `pushrelay` parses it and run on the test's console.
struct CLIFrontEnd: AdminFrontEnd {
    let store = MemoryStore()
    let clock = StepClock()
    /// Every line the commands printed, and every error message they ended with.
    let output = OutputLines()

    var console: AdminConsole {
        let audit = AdminAuditWriter(store: store, chain: "test:cli", actor: "cli:tester", signingKey: nil)
        let clock = self.clock
        let administration = TenantAdministration(
            store: store, audit: audit, tenantDefaults: RateLimits(), configuredApps: AdminFrontEnds.apps,
            now: { clock.now })
        let output = self.output
        return AdminConsole(administration: administration, output: { output.append($0) })
    }

    func run(_ steps: [AdminStep]) async throws -> [AdminAnswer] {
        try await take(steps) { step, keys in try await run(arguments(step, keys: keys) + ["--json"]) }
    }

    /// How one command line ended: the lines it printed, or its error message (a usage error when parsing refused
    /// it). Either way the lines are also in ``output``.
    enum Outcome: Equatable {
        case printed([String])
        case usageError(String)
        case error(String)
    }

    /// Runs one command line as `pushrelay` would, on this front end's console.
    @discardableResult
    func execute(_ arguments: [String]) async throws -> Outcome {
        let command: any ParsableCommand
        do {
            command = try PushRelayCommand.parseAsRoot(arguments)
        } catch {
            let message = PushRelayCommand.message(for: error)
            output.append(message)
            return .usageError(message)
        }
        let admin = try #require(command as? any AdminCommand, "\(arguments)")
        let before = output.all.count
        do {
            try await console.run(admin)
        } catch {
            let message = PushRelayCommand.message(for: error)
            output.append(message)
            return .error(message)
        }
        return .printed(Array(output.all.dropFirst(before)))
    }

    /// Runs one command line: its last line of output as JSON, or its error.
    func run(_ arguments: [String]) async throws -> AdminAnswer {
        switch try await execute(arguments) {
        case .usageError(let message): return .invalid(Self.fields(message))
        case .error(let message):
            // Rules the administration checks (an app the relay does not have) end the command as a usage error
            // would, with the same lines naming the options.
            let fields = Self.fields(message)
            let options = Set(TenantRules.Field.allCases.map(\.rawValue))
            return fields.keys.allSatisfy(options.contains) ? .invalid(fields) : .failed(message)
        case .printed(let lines):
            let last = try #require(lines.last, "\(arguments) printed nothing")
            return .json(try #require(JSONValue.decode(Array(last.utf8)), "\(last)"))
        }
    }

    /// `--burst must be from 1 to 1000000, not 0` lines as `["burst": "must be from 1 to 1000000, not 0"]`.
    static func fields(_ message: String) -> [String: String] {
        var names = Dictionary(
            uniqueKeysWithValues: TenantRules.Field.allCases.map { (AdminConsole.option($0), $0.rawValue) })
        names[TenantCommand.Update.nameOption] = TenantRules.Field.name.rawValue
        var fields: [String: String] = [:]
        for line in message.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            fields[names[parts[0]] ?? parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }

    func arguments(_ step: AdminStep, keys: IssuedKeys) -> [String] {
        switch step {
        case .create(let name, let fields): ["tenant", "create", name] + fields.arguments(creating: true)
        case .update(let name, let fields): ["tenant", "update", name] + fields.arguments(creating: false)
        case .show(let name): ["tenant", "show", name]
        case .list(let includeDeleted): ["tenant", "list"] + (includeDeleted ? ["--include-deleted"] : [])
        case .disable(let name): ["tenant", "disable", name]
        case .enable(let name): ["tenant", "enable", name]
        case .delete(let name): ["tenant", "delete", name]
        case .issueKey(let tenant, let days):
            ["key", "issue", "--tenant", tenant] + (days.map { ["--expires-in-days=\($0)"] } ?? [])
        case .listKeys(let tenant): ["key", "list", "--tenant", tenant]
        case .rotateKey(_, let key, let days):
            ["key", "rotate", keys.reference(key)] + (days.map { ["--overlap-days=\($0)"] } ?? [])
        case .revokeKey(_, let key): ["key", "revoke", keys.reference(key)]
        case .usage(let tenant, let days): ["usage", tenant] + (days.map { ["--days=\($0)"] } ?? [])
        case .recordUsage: []
        }
    }
}

// MARK: - The admin API

/// The admin API: each step a request by an admin operator, through the relay's responder (its JSON errors).
struct APIFrontEnd: AdminFrontEnd {
    let store = MemoryStore()
    let clock = StepClock()

    func run(_ steps: [AdminStep]) async throws -> [AdminAnswer] {
        let issued = OperatorTokens.issue()
        try await store.createOperator(
            OperatorRecord(id: issued.id, name: "alice", role: .admin, secretHash: issued.secretHash))
        let relay = Relay(
            store: store, senders: [:], settings: RelaySettings(tenantDefaults: RateLimits(), apps: AdminFrontEnds.apps)
        )
        let router = Router(context: RelayRequestContext.self)
        let clock = self.clock
        AdminAPI(relay: relay, now: { clock.now }).addRoutes(to: router)
        let application = Application(
            router: RelayResponderBuilder(router: router, relay: relay), services: [relay.commits])
        return try await application.test(.router) { client in
            try await take(steps) { step, keys in
                guard case .show(let name) = step else {
                    let (method, uri, body) = Self.request(step, keys: keys)
                    return try await Self.answer(
                        client.execute(uri: uri, method: method, token: issued.key, json: body))
                }
                // `tenant show` is the tenant with its keys: two requests here.
                let tenant = try await Self.answer(
                    client.execute(uri: "/admin/v1/tenants/\(name)", method: .get, token: issued.key))
                guard case .json(let object) = tenant else { return tenant }
                let keyList = try await Self.answer(
                    client.execute(uri: "/admin/v1/tenants/\(name)/keys", method: .get, token: issued.key))
                var fields = object.objectValue ?? [:]
                fields["keys"] = keyList.jsonValue?["data"] ?? .null
                return .json(.object(fields))
            }
        }
    }

    static func request(_ step: AdminStep, keys: IssuedKeys) -> (HTTPRequest.Method, String, JSONValue?) {
        let tenants = "/admin/v1/tenants"
        func days(_ field: String, _ value: Int?) -> JSONValue? { value.map { .object([field: .int(Int64($0))]) } }
        return switch step {
        case .create(let name, let fields):
            (.post, tenants, .object((fields.json.objectValue ?? [:]).merging(["name": .string(name)]) { $1 }))
        case .update(let name, let fields): (.patch, "\(tenants)/\(name)", fields.json)
        case .show(let name): (.get, "\(tenants)/\(name)", nil)
        case .list(let includeDeleted): (.get, tenants + (includeDeleted ? "?includeDeleted=true" : ""), nil)
        case .disable(let name): (.post, "\(tenants)/\(name)/disable", nil)
        case .enable(let name): (.post, "\(tenants)/\(name)/enable", nil)
        case .delete(let name): (.delete, "\(tenants)/\(name)", nil)
        case .issueKey(let tenant, let expires): (.post, "\(tenants)/\(tenant)/keys", days("expiresInDays", expires))
        case .listKeys(let tenant): (.get, "\(tenants)/\(tenant)/keys", nil)
        case .rotateKey(let tenant, let key, let overlap):
            (.post, "\(tenants)/\(tenant)/keys/\(keys.reference(key))/rotate", days("overlapDays", overlap))
        case .revokeKey(let tenant, let key): (.delete, "\(tenants)/\(tenant)/keys/\(keys.reference(key))", nil)
        case .usage(let tenant, let days):
            (.get, "\(tenants)/\(tenant)/usage" + (days.map { "?days=\($0)" } ?? ""), nil)
        case .recordUsage: (.get, "/", nil)
        }
    }

    /// A response as an answer: its JSON (for a list, its `data`… as the CLI prints it, whole), its fields, or its
    /// message.
    static func answer(_ response: TestResponse) throws -> AdminAnswer {
        let json = try #require(JSONValue.decode(response.body.readableBytesView), "\(response.status)")
        switch response.status.code {
        case 200, 201: return .json(json)
        case 400:
            var fields: [String: String] = [:]
            for error in json["errors"]?.arrayValue ?? [] {
                fields[error["path"]?.stringValue ?? ""] = error["message"]?.stringValue ?? ""
            }
            return .invalid(fields)
        default: return .failed(json["errors"]?[0]?["message"]?.stringValue ?? "\(response.status)")
        }
    }
}

extension TestClientProtocol {
    func execute(uri: String, method: HTTPRequest.Method, token: String, json: JSONValue? = nil) async throws
        -> TestResponse
    {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        if json != nil { headers[.contentType] = "application/json" }
        return try await execute(
            uri: uri, method: method, headers: headers, body: json.map { ByteBuffer(string: $0.encodedString()) })
    }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? { objectValue?[key] }

    subscript(index: Int) -> JSONValue? {
        if case .array(let items) = self, items.indices.contains(index) { return items[index] }
        return nil
    }

    var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}
