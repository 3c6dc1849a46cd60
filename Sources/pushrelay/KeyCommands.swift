import ArgumentParser
import Foundation
import RelayApplication
import RelayCore
import RelayServer
import RelayStore

/// `pushrelay key …`: tenant keys. `rotate` and `revoke` take a key's id or the whole key (what an install holds);
/// no output and no error ever repeats a key's secret, only its id, except the new key `issue` and `rotate` show once.
struct KeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Issue, list, rotate and revoke tenant keys.",
        subcommands: [Issue.self, List.self, Rotate.self, Revoke.self]
    )

    static let keyHelp = ArgumentHelp(
        "The key's id (the 16 hex digits after prk_), or the whole key.", valueName: "key")

    struct Issue: AdminCommand {
        static let configuration = CommandConfiguration(abstract: "Issue a key for a tenant; it is shown once.")
        @Option(help: "The tenant's name or id.")
        var tenant: String
        @Option(name: .customLong("expires-in-days"), help: "Let the key expire after this many days (default: never).")
        var expiresInDays: Int?
        @OptionGroup var options: StoreOptions

        func validate() throws {
            try AdminConsole.check(expiresInDays, .expiresInDays, in: TenantRules.expiresInDays)
        }

        func run(on console: AdminConsole) async throws {
            let owner = try await console.administration.tenant(tenant)
            let issued = try await console.administration.issueKey(for: owner, expiresInDays: expiresInDays)
            if options.json {
                console.write(json: AdminJSON.issued(issued, at: console.now))
            } else {
                let expiry = issued.record.expiresAt.map { ", expiring \($0.formatted(.iso8601))" } ?? ""
                console.write("Key \(issued.record.id) for tenant \(owner.name)\(expiry):")
                console.write(issued.key)
                console.write("This is the only time the key is shown; the relay keeps only its hash.")
            }
        }
    }

    struct List: AdminCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a tenant's keys (ids and dates, never secrets).")
        @Option(help: "The tenant's name or id.") var tenant: String
        @OptionGroup var options: StoreOptions

        func run(on console: AdminConsole) async throws {
            let owner = try await console.administration.tenant(tenant)
            let keys = try await console.administration.keys(of: owner)
            if options.json {
                let now = console.now
                console.write(json: AdminJSON.list(keys.map { AdminJSON.key($0, at: now) }))
            } else {
                writeKeys(keys, to: console)
            }
        }
    }

    struct Rotate: AdminCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a new key and let the old one expire after an overlap, so the install can switch."
        )
        @Argument(help: KeyCommand.keyHelp) var key: String
        @Option(name: .customLong("overlap-days"), help: "Days the old key keeps working.")
        var overlapDays = TenantRules.defaultOverlapDays
        @OptionGroup var options: StoreOptions

        func validate() throws {
            try AdminConsole.check(overlapDays, .overlapDays, in: TenantRules.overlapDays)
        }

        func run(on console: AdminConsole) async throws {
            let old = try await console.administration.key(key)
            let rotated = try await console.administration.rotateKey(old, overlapDays: overlapDays)
            if options.json {
                console.write(json: AdminJSON.rotated(rotated, at: console.now))
            } else {
                let new = rotated.issued
                console.write("New key \(new.record.id) for tenant \(rotated.tenant.name):")
                console.write(new.key)
                let end = (rotated.old.expiresAt ?? console.now).formatted(.iso8601)
                console.write("Key \(old.id) keeps working until \(end). The new key is shown only now.")
            }
        }
    }

    struct Revoke: AdminCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a key by its id or the whole key; running relays refuse it within 5 s."
        )
        @Argument(help: KeyCommand.keyHelp) var key: String
        @OptionGroup var options: StoreOptions

        func run(on console: AdminConsole) async throws {
            let found = try await console.administration.key(key)
            let revoked = try await console.administration.revokeKey(found)
            if options.json {
                console.write(json: AdminJSON.key(revoked, at: console.now))
            } else {
                console.write("Key \(revoked.id) is revoked.")
            }
        }
    }
}
