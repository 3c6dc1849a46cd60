import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The rules alone: every bound at its edge (accepted) and one past it (refused), as documented in api.md.
@Suite struct TenantRulesTests {
    /// A whole-number bound: its name, the range the rules use, and the range the documentation promises.
    struct WholeNumberBound: Sendable, CustomTestStringConvertible {
        var name: String
        var range: ClosedRange<Int>
        var documented: ClosedRange<Int>
        var testDescription: String { name }
    }

    static let wholeNumbers = [
        WholeNumberBound(name: "burst", range: TenantRules.burst, documented: 1...1_000_000),
        WholeNumberBound(name: "dailyQuota", range: TenantRules.dailyQuota, documented: 1...1_000_000_000),
        WholeNumberBound(name: "perDevicePerMinute", range: TenantRules.perDevicePerMinute, documented: 1...1_000_000),
        WholeNumberBound(
            name: "criticalReservePerHour", range: TenantRules.criticalReservePerHour, documented: 0...1_000_000),
        WholeNumberBound(name: "expiresInDays", range: TenantRules.expiresInDays, documented: 1...3650),
        WholeNumberBound(name: "overlapDays", range: TenantRules.overlapDays, documented: 0...365),
        WholeNumberBound(name: "days", range: TenantRules.usageDays, documented: 1...366),
    ]

    @Test(arguments: wholeNumbers)
    func wholeNumbersHoldAtTheirEdgesAndNotOnePast(_ bound: WholeNumberBound) {
        #expect(bound.range == bound.documented)
        let low = Int64(bound.range.lowerBound)
        let high = Int64(bound.range.upperBound)
        #expect(TenantRules.problem(low, in: bound.range) == nil)
        #expect(TenantRules.problem(high, in: bound.range) == nil)
        #expect(TenantRules.problem(low - 1, in: bound.range) == "must be from \(low) to \(high), not \(low - 1)")
        #expect(TenantRules.problem(high + 1, in: bound.range) == "must be from \(low) to \(high), not \(high + 1)")
        #expect(TenantRules.notAnInteger(in: bound.range) == "must be an integer from \(low) to \(high)")
    }

    /// The issue's example: a burst of 1,000,000,000 that one front end took and the other refused.
    @Test func aChangeIsCheckedFieldByField() {
        let edge = TenantChanges(
            name: String(repeating: "n", count: 100), rate: 1_000_000, burst: 1_000_000, dailyQuota: 1_000_000_000,
            perDevicePerMinute: 1_000_000, criticalReservePerHour: 1_000_000, allowedProviders: .some([.apns]),
            criticalChannel: .some(String(repeating: "c", count: 256)), note: .some(String(repeating: "x", count: 1000))
        )
        #expect(TenantRules.violations(in: edge, creating: true).isEmpty)
        let low = TenantChanges(
            name: "a", rate: .leastNonzeroMagnitude, burst: 1, dailyQuota: 1, perDevicePerMinute: 1,
            criticalReservePerHour: 0, criticalChannel: .some("c"), note: .some("")
        )
        #expect(TenantRules.violations(in: low, creating: true).isEmpty)

        let beyond = TenantChanges(
            name: String(repeating: "n", count: 101), rate: 1_000_000.000_1, burst: 1_000_000_000,
            dailyQuota: 1_000_000_001, perDevicePerMinute: 1_000_001, criticalReservePerHour: 1_000_001,
            allowedProviders: .some([]),
            criticalChannel: .some(String(repeating: "c", count: 257)), note: .some(String(repeating: "x", count: 1001))
        )
        #expect(
            TenantRules.violations(in: beyond, creating: false) == [
                .init(.name, "must be 1 to 100 characters and not blank"),
                .init(.rate, "must be more than 0 and at most 1000000"),
                .init(.burst, "must be from 1 to 1000000, not 1000000000"),
                .init(.dailyQuota, "must be from 1 to 1000000000, not 1000000001"),
                .init(.perDevicePerMinute, "must be from 1 to 1000000, not 1000001"),
                .init(.criticalReservePerHour, "must be from 0 to 1000000, not 1000001"),
                .init(.allowedProviders, "must name at least one provider"),
                .init(.criticalChannel, "must be 1 to 256 characters without control characters"),
                .init(.note, "must be at most 1000 characters"),
            ]
        )
        let under = TenantChanges(
            rate: 0, burst: 0, dailyQuota: 0, perDevicePerMinute: 0, criticalReservePerHour: -1,
            criticalChannel: .some(""))
        #expect(
            TenantRules.violations(in: under, creating: false).map(\.field) == [
                .rate, .burst, .dailyQuota, .perDevicePerMinute, .criticalReservePerHour, .criticalChannel,
            ])
    }

    @Test(arguments: [
        ("acme", true), ("big corp", true), (String(repeating: "é", count: 100), true), ("", false), ("   ", false),
        ("a\u{7}b", false), ("tab\tname", false), ("line\nbreak", false), (String(repeating: "n", count: 101), false),
    ])
    func names(_ name: String, _ valid: Bool) {
        #expect((TenantRules.problem(name: name) == nil) == valid)
    }

    @Test(
        arguments: [
            (1_000_000, true), (1_000_000.0.nextUp, false), (0.5, true), (0, false), (-1, false), (.nan, false),
            (.infinity, false),
        ] as [(Double, Bool)])
    func rates(_ rate: Double, _ valid: Bool) {
        #expect((TenantRules.problem(rate: rate) == nil) == valid)
    }

    /// Any text is an Android channel id, spaces included; control characters would go into every payload.
    @Test(arguments: [("oncall", true), ("on call", true), ("", false), ("a\nb", false), ("a\u{0}", false)])
    func criticalChannels(_ channel: String, _ valid: Bool) {
        #expect((TenantRules.problem(criticalChannel: channel) == nil) == valid)
    }

    @Test func creationNeedsANameAndStartsEnabled() {
        #expect(TenantRules.violations(in: TenantChanges(), creating: true).map(\.field) == [.name])
        #expect(TenantRules.violations(in: TenantChanges(), creating: false).isEmpty)
        let disabled = TenantChanges(name: "x", disabled: true)
        #expect(TenantRules.violations(in: disabled, creating: true).map(\.field) == [.disabled])
        #expect(TenantRules.violations(in: disabled, creating: false).isEmpty)
    }

    @Test func providersAreNamedExactly() {
        #expect(TenantRules.provider(named: "apns") == .apns)
        #expect(TenantRules.provider(named: "expo") == .expo)
        #expect(TenantRules.provider(named: "APNS") == nil)
        #expect(TenantRules.provider(named: "pigeon") == nil)
        #expect(TenantRules.unknownProvider == "must be one of 'apns', 'fcm', 'expo'")
    }

    /// An empty note is no note, and `.some(nil)` clears what may be absent.
    @Test func changesApplyAndClear() {
        let tenant = Tenant(name: "acme", allowedProviders: [.fcm], criticalChannel: "pages", note: "n")
        let cleared = TenantChanges(allowedProviders: .some(nil), criticalChannel: .some(nil), note: .some(""))
            .applied(to: tenant)
        #expect(cleared.allowedProviders == nil && cleared.criticalChannel == nil && cleared.note == nil)
        let kept = TenantChanges(burst: 7).applied(to: tenant)
        #expect(kept.limits.burst == 7 && kept.allowedProviders == [.fcm] && kept.note == "n")
    }

    /// A key reference is an id, or a whole key taken for its id; anything else is no reference (and never shown).
    @Test func keyReferences() {
        let issued = TenantKeys.issue()
        #expect(TenantAdministration.keyID(from: issued.id) == issued.id)
        #expect(TenantAdministration.keyID(from: issued.key) == issued.id)
        #expect(TenantAdministration.keyID(from: "prk_\(issued.id)_short") == issued.id)
        #expect(TenantAdministration.keyID(from: "prk_nothex_" + String(issued.key.suffix(43))) == nil)
        #expect(TenantAdministration.keyID(from: String(issued.key.suffix(43))) == nil)
        #expect(TenantAdministration.keyID(from: "nope") == nil)
        #expect(TenantAdministration.keyID(from: "pro_\(issued.id)_secret") == nil)
    }
}
