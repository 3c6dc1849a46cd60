package import RelayCore
package import RelayProviders

extension RelayConfiguration {
    /// One app's credentials: `[apps.<name>.apns]`, `[apps.<name>.fcm]`, `[apps.<name>.expo]`, each optional; for the
    /// app named `default`, the top-level sections.
    package struct App: Sendable, Equatable {
        package var apns: APNs?
        package var fcm: FCM?
        /// `nil` when the app has no `[expo]` section of its own (the default app always has Expo).
        package var expo: Expo?

        package init(apns: APNs? = nil, fcm: FCM? = nil, expo: Expo? = nil) {
            self.apns = apns
            self.fcm = fcm
            self.expo = expo
        }

        /// The providers this app has credentials for.
        package var providers: Set<Provider> {
            var providers: Set<Provider> = []
            if apns != nil { providers.insert(.apns) }
            if fcm != nil { providers.insert(.fcm) }
            if expo != nil { providers.insert(.expo) }
            return providers
        }
    }

    /// Every app by name: ``apps`` and the default app of the top-level sections.
    package var allApps: [String: App] {
        var all = apps
        all[AppName.default] = App(apns: apns, fcm: fcm, expo: expo)
        return all
    }

    /// The names of every app, `default` first, then in alphabetical order.
    package var appNames: [String] { [AppName.default] + apps.keys.sorted() }

    /// `[apns]`: token-based APNs credentials; present only when `key_file` is set.
    package struct APNs: Sendable, Equatable {
        /// `team_id`: the Apple Developer team id (the JWT `iss`).
        package var teamID: String
        /// `key_id`: the signing key's id (the JWT `kid`).
        package var keyID: String
        /// `key_file`: absolute path of the `.p8` signing key.
        package var keyFile: String
        /// The contents of ``keyFile``: a PEM P-256 private key, checked when loaded.
        package var keyPEM: Secret
        /// `topic`: the app's bundle id.
        package var topic: String
        /// `environment`: the APNs environment the app's device tokens belong to unless a push says otherwise.
        package var environment: APNsEnvironment
        /// `endpoint`: the production endpoint, without a trailing slash.
        package var endpoint: String
        /// `sandbox_endpoint`: the sandbox endpoint, without a trailing slash.
        package var sandboxEndpoint: String

        package static let defaultEndpoint = "https://api.push.apple.com"
        package static let defaultSandboxEndpoint = "https://api.sandbox.push.apple.com"

        package init(
            teamID: String,
            keyID: String,
            keyFile: String,
            keyPEM: Secret,
            topic: String,
            environment: APNsEnvironment = .production,
            endpoint: String = APNs.defaultEndpoint,
            sandboxEndpoint: String = APNs.defaultSandboxEndpoint
        ) {
            self.teamID = teamID
            self.keyID = keyID
            self.keyFile = keyFile
            self.keyPEM = keyPEM
            self.topic = topic
            self.environment = environment
            self.endpoint = endpoint
            self.sandboxEndpoint = sandboxEndpoint
        }

        /// The endpoint for device tokens of `environment`.
        package func endpoint(for environment: APNsEnvironment) -> String {
            switch environment {
            case .production: endpoint
            case .sandbox: sandboxEndpoint
            }
        }
    }

    /// `[fcm]`: the Firebase service account; present only when `service_account_file` is set.
    package struct FCM: Sendable, Equatable {
        /// `service_account_file`: absolute path of the service-account JSON.
        package var serviceAccountFile: String
        /// The service account's `project_id`.
        package var projectID: String
        /// The service account's `client_email`.
        package var clientEmail: String
        /// The service account's `private_key_id`, when the file has one.
        package var privateKeyID: String?
        /// The service account's `private_key` (PEM).
        package var privateKey: Secret
        /// The service account's `token_uri`, where access tokens are obtained.
        package var tokenURI: String
        /// `endpoint`: the FCM endpoint, without a trailing slash.
        package var endpoint: String

        package static let defaultEndpoint = "https://fcm.googleapis.com"

        package init(
            serviceAccountFile: String,
            projectID: String,
            clientEmail: String,
            privateKeyID: String?,
            privateKey: Secret,
            tokenURI: String,
            endpoint: String = FCM.defaultEndpoint
        ) {
            self.serviceAccountFile = serviceAccountFile
            self.projectID = projectID
            self.clientEmail = clientEmail
            self.privateKeyID = privateKeyID
            self.privateKey = privateKey
            self.tokenURI = tokenURI
            self.endpoint = endpoint
        }

        /// The service account in the form ``FCMAccessTokenProvider`` takes.
        package var serviceAccount: ServiceAccount {
            ServiceAccount(
                projectID: projectID,
                privateKeyID: privateKeyID,
                privateKey: privateKey.value,
                clientEmail: clientEmail,
                tokenURI: tokenURI
            )
        }
    }

    /// `[expo]`: Expo needs no credential, so it is always configured; the access token is optional.
    package struct Expo: Sendable, Equatable {
        /// `access_token`, or the trimmed contents of `access_token_file`; `nil` when neither is set.
        package var accessToken: Secret?
        /// `endpoint`: the Expo endpoint, without a trailing slash.
        package var endpoint: String
        /// `receipt_delay_seconds`: how long after Expo accepts a ticket the relay first asks for its receipt.
        package var receiptDelaySeconds: Int

        package static let defaultEndpoint = "https://exp.host"
        /// Expo: "check about 15 minutes after sending"; its receipts are kept for 24 hours.
        package static let defaultReceiptDelaySeconds = 15 * 60

        package init(
            accessToken: Secret? = nil,
            endpoint: String = Expo.defaultEndpoint,
            receiptDelaySeconds: Int = Expo.defaultReceiptDelaySeconds
        ) {
            self.accessToken = accessToken
            self.endpoint = endpoint
            self.receiptDelaySeconds = receiptDelaySeconds
        }
    }

    /// `[android]`: Android-specific delivery settings.
    package struct Android: Sendable, Equatable {
        /// `critical_channel_id`: the notification channel critical alerts use; the app must create it.
        package var criticalChannelID: String

        package init(criticalChannelID: String = "oncall_critical") {
            self.criticalChannelID = criticalChannelID
        }
    }
}
