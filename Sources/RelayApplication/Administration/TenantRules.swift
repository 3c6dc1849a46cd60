package import Foundation
package import RelayCore
package import RelayStore

/// The rules of tenant administration: the bounds of every tenant field, of a key's lifetime and of a usage report,
/// and the words that say a value breaks one.
///
/// ### Overview
/// This is the one home of these rules. The admin API's body and query readers, the command-line options and
/// ``TenantAdministration`` all ask here, so that `pushrelay tenant update --burst N` and `PATCH {"burst": N}`
/// accept and refuse the same values with the same message. Each front end reads its own syntax (JSON types, option
/// values) and names a field its own way (`burst`, `--burst`); what a value may be is decided here only.
///
/// How many keys a tenant may hold and how rotation works are ``KeyLifecycle``'s.
package enum TenantRules {
    /// A field that a rule applies to; `rawValue` is its name in the admin API (a body field or query parameter).
    package enum Field: String, Sendable, CaseIterable {
        case name
        case rate
        case burst
        case dailyQuota
        case perDevicePerMinute
        case criticalReservePerHour
        case allowCriticalAlerts
        case allowedProviders
        case criticalChannel
        case apps
        case defaultApp
        case note
        case disabled
        /// A new key's lifetime.
        case expiresInDays
        /// How long a rotated key keeps working.
        case overlapDays
        /// The days of a usage report.
        case days
    }

    /// One broken rule: the field, and what is wrong with its value (`must be from 1 to 1000000, not 0`).
    package struct Violation: Sendable, Equatable, Hashable, CustomStringConvertible {
        package var field: Field
        package var message: String

        package init(_ field: Field, _ message: String) {
            self.field = field
            self.message = message
        }

        package var description: String { "\(field.rawValue): \(message)" }
    }

    package static let nameLength = 1...100
    /// Notifications per second: more than 0, at most this.
    package static let maxRate: Double = 1_000_000
    package static let burst = 1...1_000_000
    package static let dailyQuota = 1...1_000_000_000
    package static let perDevicePerMinute = 1...1_000_000
    /// Critical notifications per UTC hour beyond the bucket, the daily quota and the per-device limit. 0 gives
    /// critical alerts no headroom: one beyond those limits is refused like any other notification.
    package static let criticalReservePerHour = 0...1_000_000
    package static let criticalChannelLength = 1...256
    /// A note may be empty: an empty note is no note.
    package static let noteLength = 0...1000
    package static let expiresInDays = 1...3650
    package static let overlapDays = 0...365
    package static let defaultOverlapDays = 7
    package static let usageDays = 1...366
    package static let defaultUsageDays = 30
    /// Day counts (key lifetimes, overlaps, usage reports) are whole days of this many seconds.
    package static let secondsPerDay: TimeInterval = 86_400

    // MARK: - One field at a time

    /// What is wrong with a tenant's name, or `nil`.
    package static func problem(name: String) -> String? {
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty, nameLength.contains(name.count) else {
            return "must be \(nameLength.lowerBound) to \(nameLength.upperBound) characters and not blank"
        }
        guard !hasControlCharacters(name) else { return "must not contain control characters" }
        return nil
    }

    /// The message for a new tenant without a name.
    package static var nameRequired: String {
        "is required: a unique name of \(nameLength.lowerBound) to \(nameLength.upperBound) characters"
    }

    package static func problem(rate: Double) -> String? {
        // Written so that NaN, which compares false with everything, is refused too.
        guard rate > 0, rate <= maxRate else { return "must be more than 0 and at most \(Int(maxRate))" }
        return nil
    }

    /// What is wrong with a whole number (`burst`, `dailyQuota`, `perDevicePerMinute`, `criticalReservePerHour`,
    /// `expiresInDays`, `overlapDays`, `days`) that must lie in `range`, or `nil`.
    package static func problem(_ value: Int64, in range: ClosedRange<Int>) -> String? {
        guard value >= Int64(range.lowerBound), value <= Int64(range.upperBound) else {
            return "must be from \(range.lowerBound) to \(range.upperBound), not \(value)"
        }
        return nil
    }

    /// The message for something that is not a whole number where one in `range` is expected.
    package static func notAnInteger(in range: ClosedRange<Int>) -> String {
        "must be an integer from \(range.lowerBound) to \(range.upperBound)"
    }

    /// Control characters are refused because the channel goes into every critical alert's Android payload; any other
    /// text is a valid Android channel id.
    package static func problem(criticalChannel: String) -> String? {
        guard criticalChannelLength.contains(criticalChannel.count), !hasControlCharacters(criticalChannel) else {
            let length = criticalChannelLength
            return "must be \(length.lowerBound) to \(length.upperBound) characters without control characters"
        }
        return nil
    }

    /// At most this many apps per tenant; apps come from the configuration, so more is a mistake.
    package static let maxApps = 100

    /// What is wrong with an app's name, or `nil`. Whether the relay has the app is ``problem(app:configured:)``'s.
    package static func problem(appName name: String) -> String? {
        AppName.isValid(name) ? nil : "must be an app's name, \(AppName.rule), not '\(name)'"
    }

    /// An empty list would allow no app at all.
    package static func problem(apps: [String]) -> String? {
        guard !apps.isEmpty, apps.count <= maxApps else { return "must name 1 to \(maxApps) apps" }
        return apps.lazy.compactMap { problem(appName: $0) }.first
    }

    /// What is wrong with naming `app` on a relay that has `configured` apps (`[apps.<name>]` and `default`), or
    /// `nil`; `nil` too when the apps are not known (`configured` is `nil`).
    package static func problem(app: String, configured: Set<String>?) -> String? {
        guard let configured, !configured.contains(app) else { return nil }
        let known = configured.sorted().map { "'\($0)'" }.joined(separator: ", ")
        return "names an app the relay does not have: '\(app)' (configured: \(known))"
    }

    /// The rules between a tenant's fields once changed: its default app is one of its apps, and every app is one the
    /// relay has (when `configured` is known).
    package static func violations(of tenant: Tenant, configuredApps configured: Set<String>?) -> [Violation] {
        var found: [Violation] = []
        for app in tenant.apps {
            if let problem = problem(app: app, configured: configured) { found.append(Violation(.apps, problem)) }
        }
        // One of its apps, each of which the relay has: so the default app is the relay's too.
        if !tenant.allows(app: tenant.defaultApp) {
            let apps = tenant.apps.map { "'\($0)'" }.joined(separator: ", ")
            found.append(
                Violation(.defaultApp, "must be one of the tenant's apps (\(apps)), not '\(tenant.defaultApp)'"))
        }
        return found
    }

    package static func problem(note: String) -> String? {
        noteLength.contains(note.count) ? nil : "must be at most \(noteLength.upperBound) characters"
    }

    /// An empty set would allow no provider at all; `nil` (every provider) is said otherwise.
    package static func problem(allowedProviders: Set<Provider>) -> String? {
        allowedProviders.isEmpty ? "must name at least one provider" : nil
    }

    /// A provider by its name: exactly `apns`, `fcm` or `expo`.
    package static func provider(named name: String) -> Provider? {
        Provider(rawValue: name)
    }

    /// The message for a provider name that is none of them.
    package static var unknownProvider: String {
        "must be one of " + Provider.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
    }

    // MARK: - A whole change

    /// Every rule `changes` break, in field order.
    ///
    /// - Parameter creating: Whether the changes make a new tenant: then `name` is required and `disabled` is not
    ///   accepted (a tenant starts enabled; disabling is its own action).
    package static func violations(in changes: TenantChanges, creating: Bool) -> [Violation] {
        var found: [Violation] = []
        func check(_ field: Field, _ problem: String?) {
            if let problem { found.append(Violation(field, problem)) }
        }
        if let name = changes.name {
            check(.name, problem(name: name))
        } else if creating {
            check(.name, nameRequired)
        }
        check(.rate, changes.rate.flatMap { problem(rate: $0) })
        check(.burst, changes.burst.flatMap { problem(Int64($0), in: burst) })
        check(.dailyQuota, changes.dailyQuota.flatMap { problem(Int64($0), in: dailyQuota) })
        check(.perDevicePerMinute, changes.perDevicePerMinute.flatMap { problem(Int64($0), in: perDevicePerMinute) })
        check(
            .criticalReservePerHour,
            changes.criticalReservePerHour.flatMap { problem(Int64($0), in: criticalReservePerHour) })
        if case .some(.some(let providers)) = changes.allowedProviders {
            check(.allowedProviders, problem(allowedProviders: providers))
        }
        if case .some(.some(let channel)) = changes.criticalChannel {
            check(.criticalChannel, problem(criticalChannel: channel))
        }
        check(.apps, changes.apps.flatMap { problem(apps: $0) })
        check(.defaultApp, changes.defaultApp.flatMap { problem(appName: $0) })
        if case .some(.some(let note)) = changes.note { check(.note, problem(note: note)) }
        if creating, changes.disabled != nil { check(.disabled, "cannot be set when creating a tenant") }
        return found
    }

    private static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
