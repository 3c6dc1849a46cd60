package import Foundation
package import RelayCore
import RelayProviders
package import RelayStore

/// What a tenant may learn of itself with its key (`GET /v1/whoami`): who it is, which key it used, what it may send,
/// its limits and what is left of them now, and the apps and providers it may use.
///
/// Never the key's secret or its hash, the operator's note, a credential or an endpoint: an app shows its APNs topic
/// and default environment and its FCM project, which are in every push the app receives anyway.
package struct TenantSelfDescription: Sendable, Equatable {
    /// The key the request came with.
    package struct Key: Sendable, Equatable {
        package var id: String
        package var createdAt: Date
        /// `nil` for a key that does not expire.
        package var expiresAt: Date?
    }

    /// What the tenant's critical alerts may do.
    package struct CriticalAlerts: Sendable, Equatable {
        /// Whether the tenant may send them at all.
        package var allowed: Bool
        /// The Android notification channel they go to: the tenant's, or the relay's (`[android] critical_channel_id`).
        package var channel: String
        /// Critical alerts a UTC hour beyond the bucket, the daily quota and the per-device limit.
        package var reservePerHour: Int
        /// What is left of that reserve in the current UTC hour, never below 0.
        package var reserveLeftThisHour: Int
        /// Critical alerts per device token per minute within the reserve (`[limits] critical_per_device_per_minute`).
        package var perDevicePerMinute: Int
    }

    /// What is left of the tenant's limits now.
    package struct Left: Sendable, Equatable {
        /// Notifications the bucket would admit at once now (this relay's view).
        package var bucket: Int
        /// The daily quota's rest; below 0 when critical alerts were sent beyond it today.
        package var dailyQuota: Int
        /// The critical reserve's rest this UTC hour.
        package var criticalReserve: Int
    }

    /// An app the tenant may send for.
    package struct App: Sendable, Equatable {
        /// APNs as the app sends through it.
        package struct APNs: Sendable, Equatable {
            /// The app's bundle id (`apns-topic` before a push type's suffix).
            package var topic: String
            /// The environment of tokens whose message names none.
            package var environment: APNsEnvironment
        }

        package var name: String
        /// Whether it is the tenant's default app (of messages that name none, and of the Expo and OneUptime routes).
        package var isDefault: Bool
        /// The providers the tenant may use and the app has credentials for, by name.
        package var providers: [Provider]
        /// `nil` unless ``providers`` has APNs (and its sender tells its settings).
        package var apns: APNs?
        /// The Firebase project; `nil` unless ``providers`` has FCM (and its sender tells its settings).
        package var fcmProjectID: String?
    }

    package var tenantID: String
    package var tenantName: String
    package var key: Key
    package var criticalAlerts: CriticalAlerts
    package var limits: RateLimits
    package var left: Left
    /// In the order of the tenant's apps (by name).
    package var apps: [App]
    package var relayVersion: String

    /// Describes `tenant` from what the relay knows of it now. Pure: the store's and the limiters' figures come in.
    ///
    /// - Parameters:
    ///   - keyRecord: The stored record of the key the request came with.
    ///   - senders: Every app's senders: which providers each app has credentials for, and its settings.
    ///   - criticalPerDevicePerMinute: The relay's `[limits] critical_per_device_per_minute`.
    ///   - left: The bucket and the daily quota's rest now.
    ///   - criticalReserveUsed: How much of this UTC hour's critical reserve is taken.
    package init(
        tenant: Tenant,
        keyRecord: TenantKeyRecord,
        senders: AppSenders,
        criticalPerDevicePerMinute: Int,
        left: (bucket: Int, dailyQuota: Int),
        criticalReserveUsed: Int
    ) {
        let reserveLeft = max(0, tenant.limits.criticalReservePerHour - criticalReserveUsed)
        tenantID = tenant.id
        tenantName = tenant.name
        key = Key(id: keyRecord.id, createdAt: keyRecord.createdAt, expiresAt: keyRecord.expiresAt)
        criticalAlerts = CriticalAlerts(
            allowed: tenant.allowCriticalAlerts,
            channel: tenant.criticalChannel ?? Self.relayCriticalChannel(tenant: tenant, senders: senders),
            reservePerHour: tenant.limits.criticalReservePerHour,
            reserveLeftThisHour: reserveLeft,
            perDevicePerMinute: criticalPerDevicePerMinute
        )
        limits = tenant.limits
        self.left = Left(bucket: left.bucket, dailyQuota: left.dailyQuota, criticalReserve: reserveLeft)
        apps = tenant.apps.map { name in
            let providers = Provider.allCases.filter {
                tenant.allows($0) && senders.sender(app: name, provider: $0) != nil
            }
            .sorted { $0.rawValue < $1.rawValue }
            func settings(_ provider: Provider) -> PayloadSettings? {
                guard providers.contains(provider) else { return nil }
                return (senders.sender(app: name, provider: provider) as? any ConfiguredSender)?.payloadSettings
            }
            return App(
                name: name,
                isDefault: name == tenant.defaultApp,
                providers: providers,
                apns: settings(.apns).map { App.APNs(topic: $0.apnsTopic, environment: $0.apnsDefaultEnvironment) },
                fcmProjectID: settings(.fcm)?.fcmProjectId
            )
        }
        relayVersion = RelayVersion.current
    }

    /// The relay's channel of critical alerts (`[android] critical_channel_id`), as the senders of the tenant's apps
    /// build FCM messages with it (every app's are built with the same), its default app's first; the default
    /// channel when none tells it.
    private static func relayCriticalChannel(tenant: Tenant, senders: AppSenders) -> String {
        let apps = [tenant.defaultApp] + tenant.apps.filter { $0 != tenant.defaultApp }
        for app in apps {
            for provider in Provider.allCases {
                if let sender = senders.sender(app: app, provider: provider) as? any ConfiguredSender {
                    return sender.payloadSettings.androidCriticalChannelId
                }
            }
        }
        return PayloadSettings.defaultCriticalChannelId
    }
}
