import ArgumentParser
import Foundation
import RelayCore
import RelayServer
import RelayStore

/// `pushrelay tenant …`: the installs that may use the relay.
struct TenantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant",
        abstract: "Create and list tenants.",
        subcommands: [Create.self, List.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a tenant.")

        @Argument(help: "A unique name for the tenant.")
        var name: String
        @Option(help: "Notifications per second (default: [limits] rate_per_second).")
        var rate: Double?
        @Option(help: "Notifications that may arrive at once (default: [limits] burst).")
        var burst: Int?
        @Option(name: .customLong("daily-quota"), help: "Notifications per UTC day (default: [limits] daily_quota).")
        var dailyQuota: Int?
        @Flag(name: .customLong("allow-critical-alerts"), help: "Allow this tenant to send critical alerts.")
        var allowCriticalAlerts = false
        @OptionGroup var options: StoreOptions

        func validate() throws {
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count <= 100 else {
                throw ValidationError("NAME must be 1 to 100 characters")
            }
            if let rate, rate <= 0 { throw ValidationError("--rate must be positive") }
            if let burst, burst < 1 { throw ValidationError("--burst must be at least 1") }
            if let dailyQuota, dailyQuota < 1 { throw ValidationError("--daily-quota must be at least 1") }
        }

        func run() async throws {
            let (configuration, store) = try await openStore(options)
            var limits = configuration.limits
            if let rate { limits.ratePerSecond = rate }
            if let burst { limits.burst = burst }
            if let dailyQuota { limits.dailyQuota = dailyQuota }
            let tenant = Tenant(name: name, limits: limits, allowCriticalAlerts: allowCriticalAlerts)
            do {
                try await store.createTenant(tenant)
            } catch StoreError.duplicate {
                throw CLIError("a tenant named '\(name)' already exists")
            }
            if options.json {
                printJSON(tenant.json)
            } else {
                print("Created tenant \(tenant.name) (id \(tenant.id)); critical alerts \(tenant.allowCriticalAlerts ? "allowed" : "not allowed").")
                print("Issue its key with: pushrelay key issue --tenant \(tenant.name)")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenants.")
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store) = try await openStore(options)
            let tenants = try await store.tenants()
            if options.json {
                printJSON(.array(tenants.map(\.json)))
                return
            }
            print("NAME\tID\tRATE/S\tBURST\tDAILY\tCRITICAL\tSTATE")
            for tenant in tenants {
                print("\(tenant.name)\t\(tenant.id)\t\(tenant.limits.ratePerSecond)\t\(tenant.limits.burst)\t\(tenant.limits.dailyQuota)\t\(tenant.allowCriticalAlerts ? "yes" : "no")\t\(tenant.disabled ? "disabled" : "active")")
            }
        }
    }
}

/// `pushrelay key …`: tenant keys.
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Issue tenant keys.",
        subcommands: [Issue.self]
    )

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a key for a tenant; it is shown once.")
        @Option(help: "The tenant's name.")
        var tenant: String
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (_, store) = try await openStore(options)
            guard let owner = try await store.tenant(named: tenant) else {
                throw CLIError("no tenant named '\(tenant)'")
            }
            let issued = TenantKeys.issue()
            try await store.createKey(TenantKeyRecord(id: issued.id, tenantID: owner.id, secretHash: issued.secretHash))
            if options.json {
                printJSON(.object(["id": .string(issued.id), "key": .string(issued.key), "tenant": .string(owner.name)]))
            } else {
                print("Key \(issued.id) for tenant \(owner.name):")
                print(issued.key)
                print("This is the only time the key is shown; the relay keeps only its hash.")
            }
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
        .object([
            "id": .string(id), "name": .string(name), "allowCriticalAlerts": .bool(allowCriticalAlerts),
            "disabled": .bool(disabled),
            "limits": .object([
                "ratePerSecond": .double(limits.ratePerSecond), "burst": .int(Int64(limits.burst)),
                "dailyQuota": .int(Int64(limits.dailyQuota)), "perDevicePerMinute": .int(Int64(limits.perDevicePerMinute)),
            ]),
        ])
    }
}
