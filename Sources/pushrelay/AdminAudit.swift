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

    init(configuration: RelayConfiguration, store: any PushStore, actor: String? = nil) {
        writer = AdminAuditWriter(configuration: configuration.audit, store: store, actor: Self.actor(named: actor))
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

    /// How the audit log names the command line's actions: `cli:<name>`, the name from `--actor`, else
    /// `PUSHRELAY_ACTOR`, else the Unix user (in a container every operator is the image's user, so name yourself:
    /// `docker exec -e PUSHRELAY_ACTOR=alice …`).
    static func actor(
        named option: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        let chosen = [option, environment["PUSHRELAY_ACTOR"]].compactMap { $0?.trimmingCharacters(in: .whitespaces) }
            .first { !$0.isEmpty }
        return "cli:\(chosen ?? userName)"
    }

    /// The actor without `--actor`.
    static var actor: String { actor(named: nil) }

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
    return (configuration, store, CLIAudit(configuration: configuration, store: store, actor: options.actor))
}

/// Loads the configuration and opens its store, or explains why not.
func openStore(_ options: StoreOptions) async throws -> (RelayConfiguration, any PushStore) {
    let configuration = try loadConfiguration(options.config)
    return (configuration, try await RelayAssembly.openStore(configuration))
}

func printJSON(_ value: JSONValue) {
    print(value.encodedString())
}
