import RelayApplication
import ArgumentParser
import Foundation
import RelayCore
import RelayServer
import RelayStore

/// `pushrelay tenant …`: the installs that may use the relay.
struct TenantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant",
        abstract: "Create, list, show, update, disable, enable and delete tenants.",
        subcommands: [Create.self, List.self, Show.self, Update.self, Disable.self, Enable.self, Delete.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a tenant.")

        @Argument(help: "A unique name for the tenant.")
        var name: String
        @OptionGroup var limits: LimitOptions
        @Flag(name: .customLong("allow-critical-alerts"), help: "Allow this tenant to send critical alerts.")
        var allowCriticalAlerts = false
        @OptionGroup var options: StoreOptions

        func validate() throws {
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count <= 100 else {
                throw ValidationError("NAME must be 1 to 100 characters")
            }
        }

        func run() async throws {
            let (configuration, store, audit) = try await openAdminStore(options)
            var limits = configuration.limits
            self.limits.apply(to: &limits)
            var tenant = Tenant(name: name, limits: limits, allowCriticalAlerts: allowCriticalAlerts)
            do {
                try await store.createTenant(tenant)
            } catch StoreError.duplicate {
                throw CLIError("a tenant named '\(name)' already exists")
            }
            tenant = try await store.tenant(id: tenant.id) ?? tenant
            try await audit.record(
                "tenant.create", done: "tenant \(tenant.name) was created", tenantID: tenant.id,
                after: tenant.auditSnapshot
            )
            if options.json {
                printJSON(tenant.json)
            } else {
                print("Created tenant \(tenant.name) (id \(tenant.id)); critical alerts \(tenant.allowCriticalAlerts ? "allowed" : "not allowed").")
                print("Issue its key with: pushrelay key issue --tenant \(tenant.name)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenants (deleted ones only with --include-deleted).")
        @Flag(name: .customLong("include-deleted"), help: "List deleted tenants too.")
        var includeDeleted = false
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store) = try await openStore(options)
            let tenants = try await store.tenants().filter { includeDeleted || !$0.isDeleted }
            if options.json {
                printJSON(.array(tenants.map(\.json)))
                return
            }
            print("NAME\tID\tRATE/S\tBURST\tDAILY\tCRITICAL\tSTATE")
            for tenant in tenants {
                print("\(tenant.name)\t\(tenant.id)\t\(tenant.limits.ratePerSecond)\t\(tenant.limits.burst)\t\(tenant.limits.dailyQuota)\t\(tenant.allowCriticalAlerts ? "yes" : "no")\t\(tenant.state)")
            }
        }
    }
}

extension TenantCommand {
    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a tenant and its keys (ids only).")
        @Argument(help: "The tenant's name.") var name: String
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store) = try await openStore(options)
            let tenant = try await requireTenant(name, in: store, allowDeleted: true)
            let keys = try await store.keys(tenantID: tenant.id)
            if options.json {
                var json = tenant.json.objectValue ?? [:]
                json["keys"] = .array(keys.map(\.json))
                printJSON(.object(json))
                return
            }
            print("Tenant \(tenant.name) (id \(tenant.id)), \(tenant.state)")
            if let deletedAt = tenant.deletedAt { print("  deleted: \(deletedAt.formatted(.iso8601))") }
            print("  limits: \(tenant.limits.ratePerSecond)/s, burst \(tenant.limits.burst), \(tenant.limits.dailyQuota)/day, \(tenant.limits.perDevicePerMinute)/device/min")
            print("  critical alerts: \(tenant.allowCriticalAlerts ? "allowed" : "not allowed")")
            print("  providers: \(tenant.allowedProviders.map { $0.isEmpty ? "none" : $0.map(\.rawValue).sorted().joined(separator: ", ") } ?? "all configured")")
            print("  critical channel (Android): \(tenant.criticalChannel ?? "the default ([android] critical_channel_id)")")
            if let note = tenant.note { print("  note: \(note)") }
            printKeys(keys)
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a tenant's limits, policy, providers, critical channel or note."
        )
        @Argument(help: "The tenant's name.") var name: String
        @OptionGroup var limits: LimitOptions
        @Option(name: .customLong("allow-critical-alerts"), help: "true or false.") var allowCriticalAlerts: Bool?
        @Option(
            name: .customLong("allow-provider"),
            help: ArgumentHelp("Allow only these providers (apns, fcm, expo); repeat for several.", valueName: "provider")
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
        @Option(help: ArgumentHelp("A note for operators (a contact, a ticket); \"\" clears it.", valueName: "text"))
        var note: String?
        @Option(name: .customLong("rename"), help: "A new unique name.") var newName: String?
        @OptionGroup var options: StoreOptions

        func validate() throws {
            if allowAllProviders && !allowProviders.isEmpty {
                throw ValidationError("give either --allow-provider or --allow-all-providers, not both")
            }
            _ = try providers()
            if clearCriticalChannel && criticalChannel != nil {
                throw ValidationError("give either --critical-channel or --clear-critical-channel, not both")
            }
            if let criticalChannel {
                guard !criticalChannel.isEmpty, criticalChannel.count <= 100,
                    !criticalChannel.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 } == true })
                else {
                    throw ValidationError("--critical-channel must be 1 to 100 characters without spaces")
                }
            }
            if let note, note.count > 1_000 { throw ValidationError("--note must be at most 1000 characters") }
            if let newName, newName.trimmingCharacters(in: .whitespaces).isEmpty || newName.count > 100 {
                throw ValidationError("--rename must be 1 to 100 characters")
            }
        }

        /// The providers of `--allow-provider`, or `nil` when it is not given.
        func providers() throws -> Set<Provider>? {
            guard !allowProviders.isEmpty else { return nil }
            return Set(
                try allowProviders.map { name in
                    guard let provider = Provider(rawValue: name.lowercased()) else {
                        throw ValidationError("--allow-provider: unknown provider '\(name)' (apns, fcm or expo)")
                    }
                    return provider
                }
            )
        }

        func run() async throws {
            let (_, store, audit) = try await openAdminStore(options)
            let before = try await requireTenant(name, in: store)
            var tenant = before
            limits.apply(to: &tenant.limits)
            if let allowCriticalAlerts { tenant.allowCriticalAlerts = allowCriticalAlerts }
            if let providers = try providers() { tenant.allowedProviders = providers }
            if allowAllProviders { tenant.allowedProviders = nil }
            if let criticalChannel { tenant.criticalChannel = criticalChannel }
            if clearCriticalChannel { tenant.criticalChannel = nil }
            if let note { tenant.note = note.isEmpty ? nil : note }
            if let newName { tenant.name = newName }
            tenant = try await save(tenant, in: store)
            try await audit.record(
                "tenant.update", done: "tenant \(tenant.name) was updated", tenantID: tenant.id,
                before: before.auditSnapshot, after: tenant.auditSnapshot
            )
            options.json ? printJSON(tenant.json) : print("Updated tenant \(tenant.name); running relays apply it within 5 s.")
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable a tenant: its keys get 403 TENANT_DISABLED.")
        @Argument(help: "The tenant's name.") var name: String
        @OptionGroup var options: StoreOptions

        func run() async throws { try await setDisabled(true, name: name, options: options) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled tenant again.")
        @Argument(help: "The tenant's name.") var name: String
        @OptionGroup var options: StoreOptions

        func run() async throws { try await setDisabled(false, name: name, options: options) }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a tenant: its keys get 403 TENANT_DISABLED; its receipts, usage and audit records stay.",
            discussion: """
                The tenant is kept, marked deleted: `tenant list` hides it (unless --include-deleted), its name stays \
                taken, and it cannot be changed or given keys any more. Running relays apply it within 5 s.
                """
        )
        @Argument(help: "The tenant's name.") var name: String
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store, audit) = try await openAdminStore(options)
            let before = try await requireTenant(name, in: store)
            var tenant = before
            tenant.deletedAt = Date()
            tenant = try await save(tenant, in: store)
            try await audit.record(
                "tenant.delete", done: "tenant \(tenant.name) was deleted", tenantID: tenant.id,
                before: before.auditSnapshot, after: tenant.auditSnapshot
            )
            if options.json {
                printJSON(tenant.json)
            } else {
                print("Tenant \(tenant.name) is deleted; running relays refuse its keys within 5 s.")
            }
        }
    }
}

/// `--rate`, `--burst`, `--daily-quota` and `--per-device-per-minute`, shared by `tenant create` and `tenant update`;
/// what is left out stays as it was (for `create`: the `[limits]` defaults).
struct LimitOptions: ParsableArguments {
    @Option(help: "Notifications per second.") var rate: Double?
    @Option(help: "Notifications that may arrive at once.") var burst: Int?
    @Option(name: .customLong("daily-quota"), help: "Notifications per UTC day.") var dailyQuota: Int?
    @Option(name: .customLong("per-device-per-minute"), help: "Notifications per device token per minute.")
    var perDevicePerMinute: Int?

    func validate() throws {
        if let rate, rate <= 0 { throw ValidationError("--rate must be positive") }
        if let burst, burst < 1 { throw ValidationError("--burst must be at least 1") }
        if let dailyQuota, dailyQuota < 1 { throw ValidationError("--daily-quota must be at least 1") }
        if let perDevicePerMinute, perDevicePerMinute < 1 {
            throw ValidationError("--per-device-per-minute must be at least 1")
        }
    }

    func apply(to limits: inout RateLimits) {
        if let rate { limits.ratePerSecond = rate }
        if let burst { limits.burst = burst }
        if let dailyQuota { limits.dailyQuota = dailyQuota }
        if let perDevicePerMinute { limits.perDevicePerMinute = perDevicePerMinute }
    }
}

func setDisabled(_ disabled: Bool, name: String, options: StoreOptions) async throws {
    let (_, store, audit) = try await openAdminStore(options)
    let before = try await requireTenant(name, in: store)
    var tenant = before
    tenant.disabled = disabled
    tenant = try await save(tenant, in: store)
    try await audit.record(
        disabled ? "tenant.disable" : "tenant.enable", done: "tenant \(tenant.name) was \(disabled ? "disabled" : "enabled")",
        tenantID: tenant.id, before: before.auditSnapshot, after: tenant.auditSnapshot
    )
    if options.json {
        printJSON(tenant.json)
    } else {
        print("Tenant \(tenant.name) is \(disabled ? "disabled" : "enabled"); running relays apply it within 5 s.")
    }
}

/// The tenant named `name`; a deleted one only with `allowDeleted` (a deleted tenant can be looked at, not changed).
func requireTenant(_ name: String, in store: any PushStore, allowDeleted: Bool = false) async throws -> Tenant {
    guard let tenant = try await store.tenant(named: name) else { throw CLIError("no tenant named '\(name)'") }
    if tenant.isDeleted && !allowDeleted { throw CLIError("tenant '\(name)' is deleted") }
    return tenant
}

/// Stores `tenant` and returns it as the store now holds it (dates at the store's precision), for the audit record.
func save(_ tenant: Tenant, in store: any PushStore) async throws -> Tenant {
    do {
        try await store.updateTenant(tenant)
    } catch StoreError.duplicate {
        throw CLIError("a tenant named '\(tenant.name)' already exists")
    }
    return try await store.tenant(id: tenant.id) ?? tenant
}

func printKeys(_ keys: [TenantKeyRecord]) {
    let now = Date()
    print("  keys:")
    if keys.isEmpty { print("    none") }
    for key in keys {
        let state = key.revokedAt != nil ? "revoked" : key.isActive(at: now) ? "active" : "expired"
        let used = key.lastUsedAt.map { "last used \($0.formatted(.iso8601))" } ?? "never used"
        print("    \(key.id)  \(state)  created \(key.createdAt.formatted(.iso8601))  \(used)")
    }
}

extension TenantKeyRecord {
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id), "createdAt": .string(createdAt.formatted(.iso8601)),
            "active": .bool(isActive(at: Date())),
        ]
        if let lastUsedAt { fields["lastUsedAt"] = .string(lastUsedAt.formatted(.iso8601)) }
        if let expiresAt { fields["expiresAt"] = .string(expiresAt.formatted(.iso8601)) }
        if let revokedAt { fields["revokedAt"] = .string(revokedAt.formatted(.iso8601)) }
        return .object(fields)
    }
}

/// `pushrelay key …`: tenant keys.
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Issue, list, rotate and revoke tenant keys.",
        subcommands: [Issue.self, List.self, Rotate.self, Revoke.self]
    )

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a key for a tenant; it is shown once.")
        @Option(help: "The tenant's name.")
        var tenant: String
        @Option(name: .customLong("expires-in-days"), help: "Let the key expire after this many days (default: never).")
        var expiresInDays: Int?
        @OptionGroup var options: StoreOptions

        func validate() throws {
            if let expiresInDays, expiresInDays < 1 { throw ValidationError("--expires-in-days must be at least 1") }
        }

        func run() async throws {
            let (_, store, audit) = try await openAdminStore(options)
            let owner = try await requireTenant(tenant, in: store)
            let expires = expiresInDays.map { Date().addingTimeInterval(TimeInterval($0) * 86_400) }
            let issued: TenantKeys.Issued
            do {
                issued = try await KeyLifecycle.issue(for: owner, expires: expires, in: store)
            } catch let failure as KeyLifecycle.Failure {
                throw CLIError(failure.description)
            }
            // Recorded before the key is shown; should that fail, the key was never shown and can be revoked.
            let stored = try await store.key(id: issued.id)
            try await audit.record(
                "key.issue", done: "key \(issued.id) was issued (revoke it with pushrelay key revoke \(issued.id))",
                tenantID: owner.id, keyID: issued.id, after: stored?.auditSnapshot
            )
            if options.json {
                var json: [String: JSONValue] = ["id": .string(issued.id), "key": .string(issued.key), "tenant": .string(owner.name)]
                if let expires { json["expiresAt"] = .string(expires.formatted(.iso8601)) }
                printJSON(.object(json))
            } else {
                print("Key \(issued.id) for tenant \(owner.name)\(expires.map { ", expiring \($0.formatted(.iso8601))" } ?? ""):")
                print(issued.key)
                print("This is the only time the key is shown; the relay keeps only its hash.")
            }
        }
    }
}

extension KeyCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a tenant's keys (ids and dates, never secrets).")
        @Option(help: "The tenant's name.") var tenant: String
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store) = try await openStore(options)
            let owner = try await requireTenant(tenant, in: store, allowDeleted: true)
            let keys = try await store.keys(tenantID: owner.id)
            options.json ? printJSON(.array(keys.map(\.json))) : printKeys(keys)
        }
    }

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a new key and let the old one expire after an overlap, so the install can switch."
        )
        @Argument(help: "The id of the key to replace.") var id: String
        @Option(name: .customLong("overlap-days"), help: "Days the old key keeps working.") var overlapDays = 7
        @OptionGroup var options: StoreOptions

        func validate() throws {
            if overlapDays < 0 { throw ValidationError("--overlap-days must be 0 or more") }
        }

        func run() async throws {
            let (_, store, audit) = try await openAdminStore(options)
            let before = try await store.key(id: id)
            if let before, let owner = try await store.tenant(id: before.tenantID), owner.isDeleted {
                throw CLIError("the key's tenant '\(owner.name)' is deleted")
            }
            let rotated: (issued: TenantKeys.Issued, tenant: Tenant, old: TenantKeyRecord)
            do {
                rotated = try await KeyLifecycle.rotate(keyID: id, overlap: TimeInterval(overlapDays) * 86_400, in: store)
            } catch let failure as KeyLifecycle.Failure {
                throw CLIError(failure.description)
            }
            let (issued, owner, old) = rotated
            let oldAfter = try await store.key(id: old.id) ?? old
            var after: [String: JSONValue] = ["old": oldAfter.auditSnapshot]
            if let new = try await store.key(id: issued.id) { after["new"] = new.auditSnapshot }
            try await audit.record(
                "key.rotate",
                done: "key \(old.id) was rotated to \(issued.id) (revoke it with pushrelay key revoke \(issued.id))",
                tenantID: owner.id, keyID: old.id, before: before.map { .object(["old": $0.auditSnapshot]) },
                after: .object(after), detail: "new key \(issued.id)"
            )
            if options.json {
                printJSON(.object([
                    "id": .string(issued.id), "key": .string(issued.key), "tenant": .string(owner.name),
                    "replaces": old.json,
                ]))
            } else {
                print("New key \(issued.id) for tenant \(owner.name):")
                print(issued.key)
                print("Key \(old.id) keeps working until \((old.expiresAt ?? Date()).formatted(.iso8601)). The new key is shown only now.")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key by its id; running relays refuse it within 5 s.")
        @Argument(help: "The key's id (the part after prk_).") var id: String
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store, audit) = try await openAdminStore(options)
            guard let before = try await store.key(id: id) else { throw CLIError("no key with id '\(id)'") }
            var key = before
            if key.revokedAt == nil {
                key.revokedAt = Date()
                try await store.updateKey(key)
                key = try await store.key(id: id) ?? key
            }
            try await audit.record(
                "key.revoke", done: "key \(id) was revoked", tenantID: key.tenantID, keyID: key.id,
                before: before.auditSnapshot, after: key.auditSnapshot
            )
            options.json ? printJSON(key.json) : print("Key \(id) is revoked.")
        }
    }
}

/// Loads the configuration and opens its store, or explains why not.
func openStore(_ options: StoreOptions) async throws -> (RelayConfiguration, any PushStore) {
    let path = FileManager.default.fileExists(atPath: options.config) ? options.config : nil
    if path == nil && options.config != "relay.conf" {
        throw CLIError("--config \(options.config): no such file")
    }
    let configuration: RelayConfiguration
    do {
        configuration = try RelayConfiguration.load(path: path, environment: ProcessInfo.processInfo.environment)
    } catch {
        throw CLIError("the configuration is not usable:\n\(error)")
    }
    return (configuration, try await RelayAssembly.openStore(configuration))
}

func printJSON(_ value: JSONValue) {
    print(value.encodedString())
}

extension Tenant {
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "id": .string(id), "name": .string(name), "allowCriticalAlerts": .bool(allowCriticalAlerts),
            "disabled": .bool(disabled),
            "limits": .object([
                "ratePerSecond": .double(limits.ratePerSecond), "burst": .int(Int64(limits.burst)),
                "dailyQuota": .int(Int64(limits.dailyQuota)), "perDevicePerMinute": .int(Int64(limits.perDevicePerMinute)),
            ]),
            "allowedProviders": allowedProviders.map { .array($0.map(\.rawValue).sorted().map(JSONValue.string)) } ?? .null,
            "criticalChannel": criticalChannel.map(JSONValue.string) ?? .null,
            "note": note.map(JSONValue.string) ?? .null,
        ]
        if let deletedAt { fields["deletedAt"] = .string(deletedAt.formatted(.iso8601)) }
        return .object(fields)
    }

    /// `deleted`, `disabled` or `active`.
    var state: String { isDeleted ? "deleted" : disabled ? "disabled" : "active" }
}
