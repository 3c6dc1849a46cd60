import ArgumentParser
import RelayApplication
import RelayCore
import RelayServer
import RelayStore

/// `pushrelay usage TENANT`: what a tenant sent, by day and provider.
struct UsageCommand: AdminCommand {
    static let configuration = CommandConfiguration(
        commandName: "usage",
        abstract: "Show a tenant's notifications per UTC day and provider, by outcome.",
        discussion: """
            Columns: delivered; token invalid (the app should drop the token); rejected (by the relay's policy or the \
            provider, for the message itself); rate-limited (429s and the per-device limit); failed (provider \
            unavailable, timeouts).
            """
    )
    @Argument(help: "The tenant's name or id.") var tenant: String
    @Option(help: "Days to show, today (UTC) included.") var days = TenantRules.defaultUsageDays
    @OptionGroup var options: StoreOptions

    func validate() throws {
        try AdminConsole.check(days, .days, in: TenantRules.usageDays)
    }

    func run(on console: AdminConsole) async throws {
        let owner = try await console.administration.tenant(tenant)
        let report = try await console.administration.usage(of: owner, days: days)
        if options.json {
            console.write(json: AdminJSON.usage(report))
        } else {
            console.write("Usage of tenant \(owner.name) since \(report.fromDay) (UTC):")
            for line in report.tableLines { console.write(line) }
        }
    }
}
