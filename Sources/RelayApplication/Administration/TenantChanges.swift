package import RelayCore
package import RelayStore

/// What an operator asks to change in a tenant, or the fields of a new one, as typed values not yet checked.
///
/// Both front ends make one: the admin API from a `POST` or `PATCH` body (``parse(_:creating:)``), the command line
/// from its options. ``TenantRules`` checks it; ``TenantAdministration`` applies it. A field left out (`nil`) stays
/// as it is (for creation: the defaults of ``Tenant`` and the relay's `[limits]`); `.some(nil)` clears the fields
/// that may be absent.
package struct TenantChanges: Sendable, Equatable {
    package var name: String?
    package var rate: Double?
    package var burst: Int?
    package var dailyQuota: Int?
    package var perDevicePerMinute: Int?
    /// Critical notifications per UTC hour beyond the other limits (``RateLimits/criticalReservePerHour``).
    package var criticalReservePerHour: Int?
    package var allowCriticalAlerts: Bool?
    /// `.some(nil)`: every provider.
    package var allowedProviders: Set<Provider>??
    /// `.some(nil)`: the relay's `[android] critical_channel_id`.
    package var criticalChannel: String??
    /// The apps the tenant may send for (``Tenant/apps``); never empty. A single app without ``defaultApp`` becomes the
    /// tenant's default app too.
    package var apps: [String]?
    /// The app of the tenant's messages that name none (``Tenant/defaultApp``).
    package var defaultApp: String?
    /// `.some(nil)` or an empty note: no note.
    package var note: String??
    /// Only for an existing tenant; creation has its own actions for this.
    package var disabled: Bool?

    package init(
        name: String? = nil,
        rate: Double? = nil,
        burst: Int? = nil,
        dailyQuota: Int? = nil,
        perDevicePerMinute: Int? = nil,
        criticalReservePerHour: Int? = nil,
        allowCriticalAlerts: Bool? = nil,
        allowedProviders: Set<Provider>?? = nil,
        criticalChannel: String?? = nil,
        apps: [String]? = nil,
        defaultApp: String? = nil,
        note: String?? = nil,
        disabled: Bool? = nil
    ) {
        self.name = name
        self.rate = rate
        self.burst = burst
        self.dailyQuota = dailyQuota
        self.perDevicePerMinute = perDevicePerMinute
        self.criticalReservePerHour = criticalReservePerHour
        self.allowCriticalAlerts = allowCriticalAlerts
        self.allowedProviders = allowedProviders
        self.criticalChannel = criticalChannel
        self.apps = apps
        self.defaultApp = defaultApp
        self.note = note
        self.disabled = disabled
    }

    /// `tenant` with these changes.
    package func applied(to tenant: Tenant) -> Tenant {
        var tenant = tenant
        if let name { tenant.name = name }
        if let rate { tenant.limits.ratePerSecond = rate }
        if let burst { tenant.limits.burst = burst }
        if let dailyQuota { tenant.limits.dailyQuota = dailyQuota }
        if let perDevicePerMinute { tenant.limits.perDevicePerMinute = perDevicePerMinute }
        if let criticalReservePerHour { tenant.limits.criticalReservePerHour = criticalReservePerHour }
        if let allowCriticalAlerts { tenant.allowCriticalAlerts = allowCriticalAlerts }
        if let allowedProviders { tenant.allowedProviders = allowedProviders }
        if let criticalChannel { tenant.criticalChannel = criticalChannel }
        if let apps {
            tenant.apps = Array(Set(apps)).sorted()
            // Allowed one app only, and not the default one: that app is the default, unless one is named.
            if defaultApp == nil, tenant.apps.count == 1, let only = tenant.apps.first, only != tenant.defaultApp {
                tenant.defaultApp = only
            }
        }
        if let defaultApp { tenant.defaultApp = defaultApp }
        if let note { tenant.note = note?.isEmpty == true ? nil : note }
        if let disabled { tenant.disabled = disabled }
        return tenant
    }
}
