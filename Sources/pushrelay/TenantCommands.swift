import ArgumentParser
import Foundation
import RelayApplication
import RelayCore
import RelayServer
import RelayStore

/// `pushrelay tenant …`: the installs that may use the relay. A tenant is named by its name or its id.
struct TenantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant",
        abstract: "Create, list, show, update, disable, enable and delete tenants.",
        subcommands: [Create.self, List.self, Show.self, Update.self, Disable.self, Enable.self, Delete.self]
    )

    struct Create: AdminCommand {
        static let configuration = CommandConfiguration(abstract: "Create a tenant.")

        @Argument(help: "A unique name for the tenant.")
        var name: String
        @OptionGroup var limits: LimitOptions
        @Flag(name: .customLong("allow-critical-alerts"), help: "Allow this tenant to send critical alerts.")
        var allowCriticalAlerts = false
        @OptionGroup var apps: AppOptions
        @OptionGroup var options: StoreOptions

        var changes: TenantChanges {
            var changes = limits.changes
            changes.name = name
            if allowCriticalAlerts { changes.allowCriticalAlerts = true }
            apps.apply(to: &changes)
            return changes
        }

        func validate() throws {
            try AdminConsole.check(TenantRules.violations(in: changes, creating: true))
        }

        func run(on console: AdminConsole) async throws {
            let tenant = try await console.administration.createTenant(changes)
            if options.json {
                console.write(json: AdminJSON.tenant(tenant))
            } else {
                let critical = tenant.allowCriticalAlerts ? "allowed" : "not allowed"
                console.write("Created tenant \(tenant.name) (id \(tenant.id)); critical alerts \(critical).")
                console.write("Issue its key with: pushrelay key issue --tenant \(tenant.name)")
            }
        }
    }

    struct List: AdminCommand {
        static let configuration = CommandConfiguration(
            abstract: "List tenants (deleted ones only with --include-deleted).")
        @Flag(name: .customLong("include-deleted"), help: "List deleted tenants too.")
        var includeDeleted = false
        @OptionGroup var options: StoreOptions

        func run(on console: AdminConsole) async throws {
            let tenants = try await console.administration.tenants(includeDeleted: includeDeleted)
            if options.json {
                console.write(json: AdminJSON.list(tenants.map(AdminJSON.tenant)))
                return
            }
            let rows = tenants.map { tenant in
                [
                    tenant.name, tenant.id, "\(tenant.limits.ratePerSecond)", "\(tenant.limits.burst)",
                    "\(tenant.limits.dailyQuota)", tenant.allowCriticalAlerts ? "yes" : "no", tenant.state,
                ]
            }
            for line in TextTable.lines(["NAME", "ID", "RATE/S", "BURST", "DAILY", "CRITICAL", "STATE"], rows) {
                console.write(line)
            }
        }
    }
}

extension TenantCommand {
    struct Show: AdminCommand {
        static let configuration = CommandConfiguration(abstract: "Show a tenant and its keys (ids only).")
        @Argument(help: "The tenant's name or id.") var name: String
        @OptionGroup var options: StoreOptions

        func run(on console: AdminConsole) async throws {
            let tenant = try await console.administration.tenant(name)
            let keys = try await console.administration.keys(of: tenant)
            if options.json {
                console.write(json: AdminJSON.tenant(tenant, keys: keys, at: console.now))
                return
            }
            console.write("Tenant \(tenant.name) (id \(tenant.id)), \(tenant.state)")
            if let deletedAt = tenant.deletedAt { console.write("  deleted: \(deletedAt.formatted(.iso8601))") }
            console.write(
                "  limits: \(tenant.limits.ratePerSecond)/s, burst \(tenant.limits.burst), \(tenant.limits.dailyQuota)/day, \(tenant.limits.perDevicePerMinute)/device/min"
            )
            console.write("  critical reserve: \(tenant.limits.criticalReservePerHour)/hour beyond these limits")
            console.write("  critical alerts: \(tenant.allowCriticalAlerts ? "allowed" : "not allowed")")
            console.write(
                "  providers: \(tenant.allowedProviders.map { $0.isEmpty ? "none" : $0.map(\.rawValue).sorted().joined(separator: ", ") } ?? "all configured")"
            )
            console.write(
                "  critical channel (Android): \(tenant.criticalChannel ?? "the default ([android] critical_channel_id)")"
            )
            console.write("  apps: \(tenant.apps.joined(separator: ", ")) (default \(tenant.defaultApp))")
            if let note = tenant.note { console.write("  note: \(note)") }
            writeKeys(keys, to: console)
        }
    }

    struct Update: AdminCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a tenant's limits, policy, providers, critical channel or note."
        )
        static let nameOption = "--rename"

        @Argument(help: "The tenant's name or id.") var name: String
        @OptionGroup var limits: LimitOptions
        @Option(name: .customLong("allow-critical-alerts"), help: "true or false.") var allowCriticalAlerts: Bool?
        @Option(
            name: .customLong("allow-provider"),
            help: ArgumentHelp(
                "Allow only these providers (apns, fcm, expo); repeat for several.", valueName: "provider")
        )
        var allowProviders: [String] = []
        @Flag(name: .customLong("allow-all-providers"), help: "Allow every configured provider again.")
        var allowAllProviders = false
        @Option(
            name: .customLong("critical-channel"),
            help: ArgumentHelp("The Android channel of this tenant's critical alerts.", valueName: "id")
        )
        var criticalChannel: String?
        @Flag(name: .customLong("clear-critical-channel"), help: "Use [android] critical_channel_id again.")
        var clearCriticalChannel = false
        @OptionGroup var apps: AppOptions
        @Option(help: ArgumentHelp("A note for operators (a contact, a ticket); \"\" clears it.", valueName: "text"))
        var note: String?
        @Option(name: .customLong("rename"), help: "A new unique name.") var newName: String?
        @OptionGroup var options: StoreOptions

        func validate() throws {
            if allowAllProviders && !allowProviders.isEmpty {
                throw ValidationError("give either --allow-provider or --allow-all-providers, not both")
            }
            if clearCriticalChannel && criticalChannel != nil {
                throw ValidationError("give either --critical-channel or --clear-critical-channel, not both")
            }
            let changes = try changes()
            // Saying "Updated" for nothing would hide a forgotten or misspelt option.
            if changes == TenantChanges() {
                throw ValidationError(
                    "nothing to change: give at least one option (see pushrelay tenant update --help)")
            }
            let violations = TenantRules.violations(in: changes, creating: false)
            try AdminConsole.check(violations, nameOption: Self.nameOption)
        }

        /// The options as one change; what is not given stays as it is.
        func changes() throws -> TenantChanges {
            var changes = limits.changes
            changes.name = newName
            changes.allowCriticalAlerts = allowCriticalAlerts
            if !allowProviders.isEmpty { changes.allowedProviders = .some(try providers()) }
            if allowAllProviders { changes.allowedProviders = .some(nil) }
            if let criticalChannel { changes.criticalChannel = .some(criticalChannel) }
            if clearCriticalChannel { changes.criticalChannel = .some(nil) }
            apps.apply(to: &changes)
            if let note { changes.note = .some(note) }
            return changes
        }

        /// The providers of `--allow-provider`.
        func providers() throws -> Set<Provider> {
            Set(
                try allowProviders.map { name in
                    guard let provider = TenantRules.provider(named: name) else {
                        let option = AdminConsole.option(.allowedProviders)
                        throw ValidationError("\(option) \(TenantRules.unknownProvider), not '\(name)'")
                    }
                    return provider
                }
            )
        }

        func run(on console: AdminConsole) async throws {
            let tenant = try await console.administration.tenant(name)
            let updated = try await console.administration.updateTenant(tenant, with: try changes())
            if options.json {
                console.write(json: AdminJSON.tenant(updated))
            } else {
                console.write("Updated tenant \(updated.name); running relays apply it within 5 s.")
            }
        }
    }

    struct Disable: AdminCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a tenant: its keys get 403 TENANT_DISABLED.")
        @Argument(help: "The tenant's name or id.") var name: String
        @OptionGroup var options: StoreOptions

        func run(on console: AdminConsole) async throws {
            try await TenantCommand.setDisabled(true, name: name, json: options.json, on: console)
        }
    }

    struct Enable: AdminCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled tenant again.")
        @Argument(help: "The tenant's name or id.") var name: String
        @OptionGroup var options: StoreOptions

        func run(on console: AdminConsole) async throws {
            try await TenantCommand.setDisabled(false, name: name, json: options.json, on: console)
        }
    }

    struct Delete: AdminCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a tenant: its keys get 403 TENANT_DISABLED; its receipts, usage and audit records stay.",
            discussion: """
                The tenant is kept, marked deleted: `tenant list` hides it (unless --include-deleted), its name stays \
                taken, and it cannot be changed or given keys any more. Deleting it again changes nothing. Running \
                relays apply it within 5 s.
                """
        )
        @Argument(help: "The tenant's name or id.") var name: String
        @OptionGroup var options: StoreOptions

        func run(on console: AdminConsole) async throws {
            let tenant = try await console.administration.tenant(name)
            let deleted = try await console.administration.deleteTenant(tenant)
            if options.json {
                console.write(json: AdminJSON.tenant(deleted))
            } else {
                console.write("Tenant \(deleted.name) is deleted; running relays refuse its keys within 5 s.")
            }
        }
    }

    static func setDisabled(_ disabled: Bool, name: String, json: Bool, on console: AdminConsole) async throws {
        let tenant = try await console.administration.tenant(name)
        let updated = try await console.administration.setDisabled(disabled, tenant)
        if json {
            console.write(json: AdminJSON.tenant(updated))
        } else {
            let state = disabled ? "disabled" : "enabled"
            console.write("Tenant \(updated.name) is \(state); running relays apply it within 5 s.")
        }
    }
}

/// `--rate`, `--burst`, `--daily-quota`, `--per-device-per-minute` and `--critical-reserve-per-hour`, shared by
/// `tenant create` and `tenant update`; what is left out stays as it was (for `create`: the `[limits]` defaults). The
/// commands check them with the rest of their change (``TenantRules``).
struct LimitOptions: ParsableArguments {
    @Option(help: "Notifications per second.") var rate: Double?
    @Option(help: "Notifications that may arrive at once.") var burst: Int?
    @Option(name: .customLong("daily-quota"), help: "Notifications per UTC day.") var dailyQuota: Int?
    @Option(name: .customLong("per-device-per-minute"), help: "Notifications per device token per minute.")
    var perDevicePerMinute: Int?
    @Option(
        name: .customLong("critical-reserve-per-hour"),
        help: "Critical alerts per UTC hour sent beyond the limits above; 0: none beyond them."
    )
    var criticalReservePerHour: Int?

    var changes: TenantChanges {
        TenantChanges(
            rate: rate, burst: burst, dailyQuota: dailyQuota, perDevicePerMinute: perDevicePerMinute,
            criticalReservePerHour: criticalReservePerHour)
    }
}

/// `--allow-app` and `--default-app`, for `tenant create` and `tenant update`.
struct AppOptions: ParsableArguments {
    @Option(
        name: .customLong("allow-app"),
        help: ArgumentHelp(
            "Allow only these apps ([apps.<name>], or default); repeat for several. Default: default.",
            valueName: "name")
    )
    var allowApps: [String] = []
    @Option(
        name: .customLong("default-app"),
        help: ArgumentHelp("The app of messages that name none; one of the allowed apps.", valueName: "name")
    )
    var defaultApp: String?

    /// Sets the apps given; what is not given stays as it is.
    func apply(to changes: inout TenantChanges) {
        if !allowApps.isEmpty { changes.apps = allowApps }
        if let defaultApp { changes.defaultApp = defaultApp }
    }
}

/// The `keys:` lines of `tenant show` and `key list`: ids, state and dates, never secrets.
func writeKeys(_ keys: [TenantKeyRecord], to console: AdminConsole) {
    let now = console.now
    console.write("  keys:")
    if keys.isEmpty {
        console.write("    none")
        return
    }
    let rows = keys.map { key in
        [
            key.id, key.revokedAt != nil ? "revoked" : key.isActive(at: now) ? "active" : "expired",
            key.createdAt.formatted(.iso8601), key.expiresAt.map { $0.formatted(.iso8601) } ?? "never",
            key.lastUsedAt.map { $0.formatted(.iso8601) } ?? "never",
        ]
    }
    for line in TextTable.lines(["KEY", "STATE", "CREATED", "EXPIRES", "LAST USED"], rows) {
        console.write("    " + line)
    }
}

extension Tenant {
    /// `deleted`, `disabled` or `active`.
    var state: String { isDeleted ? "deleted" : disabled ? "disabled" : "active" }
}
