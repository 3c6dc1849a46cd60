package import RelayCore
package import RelayProviders

/// The senders of every app the relay sends for: for each app (`default`, each `[apps.<name>]`), one sender per
/// provider it has credentials for.
///
/// Each app's senders have their own credentials and HTTP/2 client (``RelayAssembly``), so nothing of one app travels
/// on another's connection. A delivery job looks its senders up once per app and provider, not per notification.
package struct AppSenders: Sendable {
    /// Senders by app, then by provider.
    package let byApp: [String: [Provider: any PushSender]]

    /// - Parameters:
    ///   - senders: The default app's (the top-level `[apns]`, `[fcm]`, `[expo]`).
    ///   - apps: The other apps', by name; an entry for `default` would replace `senders`.
    package init(_ senders: [Provider: any PushSender], apps: [String: [Provider: any PushSender]] = [:]) {
        var byApp = apps
        byApp[AppName.default] = byApp[AppName.default] ?? senders
        self.byApp = byApp
    }

    /// The sender of `app` for `provider`; `nil` when the app has no credentials for it, or is not the relay's.
    package func sender(app: String, provider: Provider) -> (any PushSender)? {
        byApp[app]?[provider]
    }

    /// The providers each app has credentials for.
    package var providers: [String: Set<Provider>] {
        byApp.mapValues { Set($0.keys) }
    }
}
