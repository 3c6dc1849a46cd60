import Foundation
import RelayApplication
import RelayCore
import RelayServer
import RelayStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The admin audit records of the command-line tools: every change they make to tenants, keys and operators is
/// appended to the `<instance>:cli` chain, naming the Unix user who ran the command.
struct CLIAudit {
    let writer: AdminAuditWriter

    init(configuration: RelayConfiguration, store: any PushStore) {
        writer = AdminAuditWriter(configuration: configuration.audit, store: store, actor: Self.actor)
    }

    /// Records an action that has been carried out; if the record cannot be written, says so, naming what was done.
    func record(
        _ action: String,
        done: String,
        tenantID: String? = nil,
        keyID: String? = nil,
        before: JSONValue? = nil,
        after: JSONValue? = nil,
        detail: String? = nil
    ) async throws {
        do {
            try await writer.record(
                action, tenantID: tenantID, keyID: keyID, before: before, after: after, detail: detail
            )
        } catch {
            throw CLIError("\(done), but its audit record (\(action)) could not be written: \(error)")
        }
    }

    /// How the audit log names the command line's actions: `cli:<unix user>`.
    static var actor: String { "cli:\(userName)" }

    /// The effective user's login name, else its numeric id.
    static var userName: String {
        let uid = geteuid()
        if let entry = getpwuid(uid), let name = entry.pointee.pw_name {
            return String(cString: name)
        }
        return "uid\(uid)"
    }
}

/// Loads the configuration, opens its store, and prepares the audit writer of admin commands.
func openAdminStore(_ options: StoreOptions) async throws -> (RelayConfiguration, any PushStore, CLIAudit) {
    let (configuration, store) = try await openStore(options)
    return (configuration, store, CLIAudit(configuration: configuration, store: store))
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
