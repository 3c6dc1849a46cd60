import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer
@testable import pushrelay

/// The command line and the admin API through the same scenarios: the same answers (the same JSON, the same fields
/// refused with the same messages, the same refusals), and the same audit records but for the actor.
@Suite(.timeLimit(.minutes(1)))
struct TenantAdministrationFrontEndTests {
    /// A scenario: steps, and what each must answer on both front ends.
    struct Scenario: Sendable, CustomTestStringConvertible {
        var name: String
        var steps: [(AdminStep, Expected)]
        var testDescription: String { name }
    }

    enum Expected: Sendable {
        case ok
        /// Refused for these fields.
        case invalid(Set<String>)
        /// Refused with a message containing this.
        case failed(String)
    }

    static let scenarios: [Scenario] = [
        Scenario(
            name: "create, update, show and list",
            steps: [
                (
                    .create(
                        "acme",
                        TenantFields(
                            rate: 5, burst: 20, dailyQuota: 1000, perDevicePerMinute: 10, criticalReservePerHour: 30,
                            allowCriticalAlerts: true)),
                    .ok
                ),
                (.create("beta", TenantFields()), .ok),
                (.create("acme", TenantFields()), .failed("already exists")),
                (
                    .update(
                        "acme",
                        TenantFields(
                            burst: 50, allowCriticalAlerts: false, allowedProviders: .some(["fcm", "apns"]),
                            criticalChannel: .some("on call"), note: .some("ticket 42"))), .ok
                ),
                (
                    .update(
                        "acme", TenantFields(allowedProviders: .some(nil), criticalChannel: .some(nil), note: .some(""))
                    ), .ok
                ),
                (.update("acme", TenantFields(criticalReservePerHour: 0)), .ok),
                (.update("acme", TenantFields(name: "acme-2")), .ok),
                (.update("acme-2", TenantFields(name: "beta")), .failed("already exists")),
                (.update("nobody", TenantFields(burst: 3)), .failed("No tenant")),
                (.show("acme-2"), .ok),
                (.show("nobody"), .failed("No tenant")),
                (.list(includeDeleted: false), .ok),
            ]
        ),
        Scenario(
            name: "limits at and beyond each bound",
            steps: [
                (
                    .create(
                        "edge",
                        TenantFields(
                            rate: 1_000_000, burst: 1_000_000, dailyQuota: 1_000_000_000, perDevicePerMinute: 1_000_000,
                            criticalReservePerHour: 1_000_000)
                    ), .ok
                ),
                (
                    .create(
                        "low",
                        TenantFields(
                            rate: 0.001, burst: 1, dailyQuota: 1, perDevicePerMinute: 1, criticalReservePerHour: 0)),
                    .ok
                ),
                (.create(String(repeating: "n", count: 100), TenantFields()), .ok),
                (.create(String(repeating: "n", count: 101), TenantFields()), .invalid(["name"])),
                (.create(" ", TenantFields()), .invalid(["name"])),
                (.create("bell\u{7}", TenantFields()), .invalid(["name"])),
                (.create("x", TenantFields(rate: 1_000_001)), .invalid(["rate"])),
                (.create("x", TenantFields(rate: 0)), .invalid(["rate"])),
                (.create("x", TenantFields(burst: 1_000_000_000)), .invalid(["burst"])),
                (.create("x", TenantFields(burst: 0)), .invalid(["burst"])),
                (.create("x", TenantFields(dailyQuota: 1_000_000_001)), .invalid(["dailyQuota"])),
                (.create("x", TenantFields(dailyQuota: 0)), .invalid(["dailyQuota"])),
                (.create("x", TenantFields(perDevicePerMinute: 1_000_001)), .invalid(["perDevicePerMinute"])),
                (.create("x", TenantFields(perDevicePerMinute: 0)), .invalid(["perDevicePerMinute"])),
                (.create("x", TenantFields(criticalReservePerHour: 1_000_001)), .invalid(["criticalReservePerHour"])),
                (.create("x", TenantFields(criticalReservePerHour: -1)), .invalid(["criticalReservePerHour"])),
                (.update("edge", TenantFields(criticalReservePerHour: -1)), .invalid(["criticalReservePerHour"])),
                (.create("x", TenantFields(rate: -1, burst: 1_000_001)), .invalid(["rate", "burst"])),
                (.update("edge", TenantFields(burst: 1_000_001)), .invalid(["burst"])),
                (.update("edge", TenantFields(criticalChannel: .some(String(repeating: "c", count: 256)))), .ok),
                (
                    .update("edge", TenantFields(criticalChannel: .some(String(repeating: "c", count: 257)))),
                    .invalid(["criticalChannel"])
                ),
                (.update("edge", TenantFields(criticalChannel: .some(""))), .invalid(["criticalChannel"])),
                (.update("edge", TenantFields(note: .some(String(repeating: "x", count: 1000)))), .ok),
                (.update("edge", TenantFields(note: .some(String(repeating: "x", count: 1001)))), .invalid(["note"])),
                (.update("edge", TenantFields(name: String(repeating: "r", count: 101))), .invalid(["name"])),
                (.show("edge"), .ok),
                (.list(includeDeleted: false), .ok),
            ]
        ),
        Scenario(
            name: "disable, enable and delete",
            steps: [
                (.create("acme", TenantFields()), .ok),
                (.disable("acme"), .ok),
                (.disable("acme"), .ok),
                (.enable("acme"), .ok),
                (.delete("acme"), .ok),
                (.delete("acme"), .ok),
                (.enable("acme"), .failed("is deleted")),
                (.update("acme", TenantFields(note: .some("x"))), .failed("is deleted")),
                (.issueKey(tenant: "acme"), .failed("is deleted")),
                (.create("acme", TenantFields()), .failed("already exists")),
                (.list(includeDeleted: false), .ok),
                (.list(includeDeleted: true), .ok),
                (.show("acme"), .ok),
            ]
        ),
        Scenario(
            name: "keys by id and by whole key",
            steps: [
                (.create("acme", TenantFields()), .ok),
                (.create("other", TenantFields()), .ok),
                (.issueKey(tenant: "acme", expiresInDays: 3650), .ok),
                (.issueKey(tenant: "acme", expiresInDays: 3651), .invalid(["expiresInDays"])),
                (.issueKey(tenant: "acme", expiresInDays: 0), .invalid(["expiresInDays"])),
                (.issueKey(tenant: "acme"), .ok),
                (.issueKey(tenant: "other"), .ok),
                (.rotateKey(tenant: "acme", .id(0), overlapDays: 365), .ok),
                (.rotateKey(tenant: "acme", .id(1), overlapDays: 366), .invalid(["overlapDays"])),
                (.rotateKey(tenant: "acme", .whole(1), overlapDays: 0), .ok),
                (.rotateKey(tenant: "acme", .whole(4)), .ok),
                (.revokeKey(tenant: "acme", .id(3)), .ok),
                (.revokeKey(tenant: "acme", .whole(0)), .ok),
                (.revokeKey(tenant: "acme", .whole(0)), .ok),
                (.rotateKey(tenant: "acme", .id(0)), .failed("revoked or expired")),
                (
                    .revokeKey(tenant: "acme", .text("0123456789abcdef")),
                    .failed("No key with the id '0123456789abcdef'")
                ),
                (
                    .revokeKey(tenant: "acme", .text("prk_0123456789abcdef_" + String(repeating: "s", count: 43))),
                    .failed("No key with the id '0123456789abcdef'")
                ),
                (.revokeKey(tenant: "acme", .text("nope")), .failed("No such key")),
                (.listKeys(tenant: "acme"), .ok),
                (.show("acme"), .ok),
            ]
        ),
        Scenario(
            name: "at most five active keys",
            steps: [(.create("acme", TenantFields()), .ok)]
                + Array(repeating: (AdminStep.issueKey(tenant: "acme"), Expected.ok), count: 5)
                + [
                    (.issueKey(tenant: "acme"), .failed("already has 5 active keys")),
                    (.rotateKey(tenant: "acme", .id(0)), .ok),
                    (.revokeKey(tenant: "acme", .id(1)), .ok),
                    (.issueKey(tenant: "acme"), .failed("already has 5 active keys")),
                ]
        ),
        Scenario(
            name: "apps",
            steps: [
                (.create("acme", TenantFields(apps: ["default", "beta"])), .ok),
                (.create("solo", TenantFields(apps: ["beta"])), .ok),
                (.create("pinned", TenantFields(apps: ["beta", "default"], defaultApp: "beta")), .ok),
                (.create("typo", TenantFields(apps: ["Beta"])), .invalid(["apps"])),
                (.create("unknown", TenantFields(apps: ["white-label"])), .invalid(["apps"])),
                (.create("elsewhere", TenantFields(defaultApp: "beta")), .invalid(["defaultApp"])),
                (.update("acme", TenantFields(defaultApp: "beta")), .ok),
                (.update("acme", TenantFields(apps: ["default"], defaultApp: "beta")), .invalid(["defaultApp"])),
                (.update("acme", TenantFields(apps: ["default"])), .ok),
                (.show("solo"), .ok),
            ]
        ),
        Scenario(
            name: "usage",
            steps: [
                (.create("acme", TenantFields()), .ok),
                (.usage(tenant: "acme"), .ok),
                (.recordUsage(tenant: "acme", .apns, UsageCounts(delivered: 5, tokenInvalid: 1)), .ok),
                (.recordUsage(tenant: "acme", .expo, UsageCounts(delivered: 1, accepted: 2)), .ok),
                (.usage(tenant: "acme"), .ok),
                (.usage(tenant: "acme", days: 366), .ok),
                (.usage(tenant: "acme", days: 1), .ok),
                (.usage(tenant: "acme", days: 367), .invalid(["days"])),
                (.usage(tenant: "acme", days: 0), .invalid(["days"])),
                (.usage(tenant: "nobody"), .failed("No tenant")),
            ]
        ),
    ]

    @Test(arguments: scenarios)
    func bothFrontEndsAnswerTheSameAndRecordTheSame(_ scenario: Scenario) async throws {
        let steps = scenario.steps.map(\.0)
        let cli = CLIFrontEnd()
        let api = APIFrontEnd()
        let cliAnswers = try await cli.run(steps)
        let apiAnswers = try await api.run(steps)
        try #require(cliAnswers.count == steps.count && apiAnswers.count == steps.count)

        var cliNames = Placeholders()
        var apiNames = Placeholders()
        for (cliAnswer, apiAnswer) in zip(cliAnswers, apiAnswers) {
            cliNames.collect(cliAnswer)
            apiNames.collect(apiAnswer)
        }
        for (index, (step, expected)) in scenario.steps.enumerated() {
            let cliAnswer = cliNames.apply(cliAnswers[index])
            let apiAnswer = apiNames.apply(apiAnswers[index])
            #expect(cliAnswer == apiAnswer, "step \(index): \(step)")
            for (frontEnd, answer) in [("cli", cliAnswer), ("api", apiAnswer)] {
                switch (expected, answer) {
                case (.ok, .json): break
                case (.invalid(let fields), .invalid(let refused)):
                    #expect(Set(refused.keys) == fields, "step \(index) on \(frontEnd): \(step)")
                case (.failed(let text), .failed(let message)):
                    #expect(message.contains(text), "step \(index) on \(frontEnd): \(step): \(message)")
                default:
                    Issue.record("step \(index) on \(frontEnd): \(step): expected \(expected), got \(answer)")
                }
            }
        }

        let cliRecords = try await cli.adminRecords().map { cliNames.apply($0) }
        let apiRecords = try await api.adminRecords().map { apiNames.apply($0) }
        #expect(cliRecords == apiRecords)
        #expect(!cliRecords.isEmpty)
    }

    /// What the scenarios show of the shapes: the admin API's flat tenant, its key and usage objects.
    @Test func theCommandLinePrintsTheAPIsObjects() async throws {
        let cli = CLIFrontEnd()
        let answers = try await cli.run([
            .create("acme", TenantFields(rate: 5, burst: 20)),
            .issueKey(tenant: "acme", expiresInDays: 30),
            .recordUsage(tenant: "acme", .fcm, UsageCounts(delivered: 2, critical: 1)),
            .usage(tenant: "acme", days: 1),
            .list(includeDeleted: false),
        ])
        let tenant = try #require(answers[0].jsonValue?.objectValue)
        #expect(
            Set(tenant.keys) == [
                "id", "name", "rate", "burst", "dailyQuota", "perDevicePerMinute", "criticalReservePerHour",
                "allowCriticalAlerts", "allowedProviders", "criticalChannel", "apps", "defaultApp", "note", "disabled",
                "createdAt", "deletedAt",
            ])
        #expect(tenant["burst"] == .int(20))
        #expect(tenant["criticalReservePerHour"] == .int(120))
        #expect(tenant["apps"] == .array([.string("default")]) && tenant["defaultApp"] == .string("default"))
        #expect(tenant["createdAt"] == .string("2027-01-15T08:00:01.000Z"))
        let key = try #require(answers[1].jsonValue?.objectValue)
        #expect(
            Set(key.keys) == ["id", "key", "tenant", "createdAt", "lastUsedAt", "expiresAt", "revokedAt", "active"])
        #expect(key["tenant"] == tenant["id"])
        #expect(key["expiresAt"] == .string("2027-02-14T08:00:02.000Z"))
        let day = UsageKey.day(of: StepClock.start)
        #expect(
            answers[3].jsonValue
                == .object([
                    "tenant": tenant["id"] ?? .null,
                    "days": .array([
                        .object([
                            "day": .string(day),
                            "providers": .object([
                                "fcm": .object([
                                    "delivered": .int(2), "tokenInvalid": .int(0), "rejected": .int(0),
                                    "rateLimited": .int(0), "failed": .int(0), "accepted": .int(0),
                                    "critical": .int(1),
                                ])
                            ]),
                            "apps": .object([
                                "default": .object([
                                    "fcm": .object([
                                        "delivered": .int(2), "tokenInvalid": .int(0), "rejected": .int(0),
                                        "rateLimited": .int(0), "failed": .int(0), "accepted": .int(0),
                                        "critical": .int(1),
                                    ])
                                ])
                            ]),
                        ])
                    ]),
                ]))
        #expect(answers[4].jsonValue?["data"]?.arrayValue?.count == 1)
    }
}

/// Stand-ins for what differs between two runs of one scenario: tenant ids, key ids and keys, each named by the
/// order it first appears in (both runs' answers have the same shape, so the same things get the same names).
struct Placeholders {
    private var names: [String: String] = [:]

    mutating func collect(_ answer: AdminAnswer) {
        if case .json(let json) = answer { collect(json) }
    }

    private mutating func collect(_ json: JSONValue) {
        switch json {
        case .object(let object):
            for key in object.keys.sorted() {
                guard let value = object[key] else { continue }
                if ["id", "tenant", "key"].contains(key), case .string(let text) = value {
                    name(text)
                } else {
                    collect(value)
                }
            }
        case .array(let items): for item in items { collect(item) }
        default: break
        }
    }

    private mutating func name(_ text: String) {
        guard names[text] == nil else { return }
        if let id = TenantAdministration.keyID(from: text), text.hasPrefix("prk_") {
            name(id)
            names[text] = "<key \(names[id] ?? "?")>"
        } else {
            names[text] = "<\(names.count)>"
        }
    }

    /// `text` with every known id and key replaced, the longest first (a key holds its id).
    func apply(_ text: String) -> String {
        names.keys.sorted { $0.count > $1.count }.reduce(text) {
            $0.replacingOccurrences(of: $1, with: names[$1] ?? $1)
        }
    }

    func apply(_ json: JSONValue) -> JSONValue {
        switch json {
        case .string(let text): .string(apply(text))
        case .array(let items): .array(items.map(apply))
        case .object(let object): .object(object.mapValues(apply))
        default: json
        }
    }

    func apply(_ answer: AdminAnswer) -> AdminAnswer {
        switch answer {
        case .json(let json): .json(apply(json))
        case .invalid(let fields): .invalid(fields.mapValues(apply))
        case .failed(let message): .failed(apply(message))
        }
    }
}
