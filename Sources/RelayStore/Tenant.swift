package import Foundation
package import RelayCore

/// A self-hosted install that forwards pushes: its limits and policy.
package struct Tenant: Sendable, Equatable, Codable {
    package var id: String
    /// Unique, chosen by the operator (`pushrelay tenant create NAME`). A deleted tenant keeps its name.
    package var name: String
    package var limits: RateLimits
    /// Only tenants with this may send critical alerts, however a message spells criticality.
    package var allowCriticalAlerts: Bool
    package var disabled: Bool
    package var createdAt: Date
    /// The providers this tenant may push through; `nil` allows every configured one.
    package var allowedProviders: Set<Provider>?
    /// The Android notification channel of this tenant's critical alerts; `nil` uses `[android] critical_channel_id`.
    package var criticalChannel: String?
    /// The apps this tenant may send for (`[apps.<name>]`, `default` for the top-level sections), sorted, never
    /// empty.
    package var apps: [String]
    /// The app of this tenant's messages that name none, and of its Expo-compatible and OneUptime requests; one of
    /// ``apps``.
    package var defaultApp: String
    /// The operator's free-text note (a contact, a ticket); never shown to the tenant.
    package var note: String?
    /// Set when the tenant was deleted. A deleted tenant authenticates nothing, but its receipts, usage and audit
    /// records stay.
    package var deletedAt: Date?

    package init(
        id: String = UUID.randomString(),
        name: String,
        limits: RateLimits = .init(),
        allowCriticalAlerts: Bool = false,
        disabled: Bool = false,
        createdAt: Date = Date(),
        allowedProviders: Set<Provider>? = nil,
        criticalChannel: String? = nil,
        apps: [String] = [AppName.default],
        defaultApp: String = AppName.default,
        note: String? = nil,
        deletedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.limits = limits
        self.allowCriticalAlerts = allowCriticalAlerts
        self.disabled = disabled
        self.createdAt = createdAt
        self.allowedProviders = allowedProviders
        self.criticalChannel = criticalChannel
        self.apps = Array(Set(apps)).sorted()
        self.defaultApp = defaultApp
        self.note = note
        self.deletedAt = deletedAt
    }

    package var isDeleted: Bool { deletedAt != nil }

    /// Whether the tenant may push through `provider`.
    package func allows(_ provider: Provider) -> Bool { allowedProviders?.contains(provider) ?? true }

    /// Whether the tenant may send for `app`.
    package func allows(app: String) -> Bool { apps.contains(app) }

    /// Whether the tenant is set up as every tenant was before there were several apps: the default app only.
    package var hasDefaultApps: Bool { apps == [AppName.default] && defaultApp == AppName.default }

    /// `apps` as stored: app names joined by commas, sorted.
    package var appsColumn: String { apps.joined(separator: ",") }

    /// Reads `apps`.
    package static func apps(fromColumn value: String) -> [String] {
        value.split(separator: ",").map(String.init)
    }

    /// `allowed_providers` as stored: provider names joined by commas, sorted; `nil` for every provider.
    package var allowedProvidersColumn: String? {
        allowedProviders.map { $0.map(\.rawValue).sorted().joined(separator: ",") }
    }

    /// Reads `allowed_providers`.
    package static func providers(fromColumn value: String?) throws -> Set<Provider>? {
        guard let value else { return nil }
        var providers = Set<Provider>()
        for name in value.split(separator: ",") {
            guard let provider = Provider(rawValue: String(name)) else {
                throw StoreError.unavailable("a tenant names an unknown provider \"\(name)\"")
            }
            providers.insert(provider)
        }
        return providers
    }
}
