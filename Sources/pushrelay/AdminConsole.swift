import ArgumentParser
import Foundation
import RelayApplication
import RelayCore
import RelayServer
import RelayStore

/// What the tenant, key and usage commands work with: ``TenantAdministration`` on a store, and where their lines go.
///
/// The commands are the command line's front end of tenant administration: they read their options into typed
/// requests, check them against ``TenantRules`` while parsing (a usage error, like any bad option), call one action,
/// and print its result: `--json` prints the admin API's objects (``AdminJSON``), otherwise a few lines of text.
///
/// `run()` opens the console from `--config` (the store, `[limits]`, and the `<instance>:cli` audit chain, acting
/// as the Unix user) and prints to standard output; tests make their own console, on a store of theirs, keep its
/// lines, and call ``run(_:)`` with a command parsed from their own arguments.
struct AdminConsole: Sendable {
    var administration: TenantAdministration
    /// Where a line of output goes.
    var output: @Sendable (String) -> Void

    /// The console of a real run: the configured store and audit chain, standard output.
    static func open(_ options: StoreOptions) async throws -> AdminConsole {
        let (configuration, store) = try await openStore(options)
        let audit = AdminAuditWriter(
            configuration: configuration.audit, store: store, actor: CLIAudit.actor(named: options.actor))
        return AdminConsole(
            administration: TenantAdministration(
                store: store, audit: audit, tenantDefaults: configuration.limits,
                configuredApps: Set(configuration.appNames)),
            output: { print($0) }
        )
    }

    /// Runs `command`; an administration failure becomes the command line's error (`Error: …`, status 1).
    func run(_ command: some AdminCommand) async throws {
        do {
            try await command.run(on: self)
        } catch let failure as TenantAdministration.Failure {
            guard case .invalid(let violations) = failure else { throw CLIError(failure.description) }
            throw CLIError(Self.lines(violations, nameOption: type(of: command).nameOption).joined(separator: "\n"))
        }
    }

    func write(_ line: String) {
        output(line)
    }

    /// Prints `value` as one line of JSON.
    func write(json value: JSONValue) {
        output(value.encodedString())
    }

    /// The time of the console's administration.
    var now: Date { administration.now() }

    // MARK: - Rules as the command line words them

    /// Throws, as a usage error, every rule `violations` name.
    static func check(_ violations: [TenantRules.Violation], nameOption: String = "NAME") throws {
        guard violations.isEmpty else {
            throw ValidationError(lines(violations, nameOption: nameOption).joined(separator: "\n"))
        }
    }

    /// `--burst must be from 1 to 1000000, not 0`: each rule broken, named by its option.
    static func lines(_ violations: [TenantRules.Violation], nameOption: String) -> [String] {
        violations.map { "\($0.field == .name ? nameOption : option($0.field)) \($0.message)" }
    }

    /// The option (or argument) of a field.
    static func option(_ field: TenantRules.Field) -> String {
        switch field {
        case .name: "NAME"
        case .rate: "--rate"
        case .burst: "--burst"
        case .dailyQuota: "--daily-quota"
        case .perDevicePerMinute: "--per-device-per-minute"
        case .criticalReservePerHour: "--critical-reserve-per-hour"
        case .allowCriticalAlerts: "--allow-critical-alerts"
        case .allowedProviders: "--allow-provider"
        case .criticalChannel: "--critical-channel"
        case .apps: "--allow-app"
        case .defaultApp: "--default-app"
        case .note: "--note"
        case .disabled: "disabled"
        case .expiresInDays: "--expires-in-days"
        case .overlapDays: "--overlap-days"
        case .days: "--days"
        }
    }

    /// Throws a usage error when `value` is not in `range`, naming `field`'s option.
    static func check(_ value: Int?, _ field: TenantRules.Field, in range: ClosedRange<Int>) throws {
        guard let value, let problem = TenantRules.problem(Int64(value), in: range) else { return }
        try check([TenantRules.Violation(field, problem)])
    }
}

/// A command that works through an ``AdminConsole``: `run()` opens one from `--config`; tests pass their own to
/// ``run(on:)`` through ``AdminConsole/run(_:)``.
protocol AdminCommand: AsyncParsableCommand {
    var options: StoreOptions { get }
    /// How the command names a tenant's name in an error: `NAME`, or `--rename` where it renames.
    static var nameOption: String { get }

    func run(on console: AdminConsole) async throws
}

extension AdminCommand {
    static var nameOption: String { "NAME" }

    func run() async throws {
        try await AdminConsole.open(options).run(self)
    }
}
