internal import Foundation
internal import RelayCore

extension RelayConfiguration {
    /// One line saying what this configuration sets up, without secrets:
    /// `APNs (production, topic com.example.app), FCM (project demo), Expo (no access token; receipts checked 900 s
    /// after sending); listening on 0.0.0.0:8080 over HTTP; store sqlite /var/lib/pushrelay/pushrelay.db; upstream over
    /// nghttp2; audit …`.
    package var summary: String {
        var providers = Self.credentialSummaries(apns: apns, fcm: fcm)
        let expoToken = expo.accessToken == nil ? "no access token" : "with access token"
        providers.append("Expo (\(expoToken); receipts checked \(expo.receiptDelaySeconds) s after sending)")
        for (name, app) in apps.sorted(by: { $0.key < $1.key }) {
            providers.append("app \(name): \(Self.appSummary(app))")
        }
        let transport = server.usesTLS ? "HTTPS" : "HTTP"
        return "\(providers.joined(separator: ", ")); listening on \(server.listen) over \(transport); "
            + "store \(storeSummary); \(upstreamSummary); \(auditSummary)"
    }

    /// `APNs (production, topic com.example.beta, key ABC123DEFG), FCM (project beta)`: a named app's credentials.
    package static func appSummary(_ app: App) -> String {
        var providers = credentialSummaries(apns: app.apns, fcm: app.fcm)
        if let expo = app.expo { providers.append(expo.accessToken == nil ? "Expo" : "Expo (with access token)") }
        return providers.isEmpty ? "no credentials" : providers.joined(separator: " ")
    }

    /// `APNs (production, topic com.example.app, key ABC123DEFG)` and `FCM (project demo)`, for those configured.
    private static func credentialSummaries(apns: APNs?, fcm: FCM?) -> [String] {
        var providers: [String] = []
        if let apns {
            providers.append("APNs (\(apns.environment.rawValue), topic \(apns.topic), key \(apns.keyID))")
        }
        if let fcm { providers.append("FCM (project \(fcm.projectID))") }
        return providers
    }

    /// `upstream over nghttp2`, or `upstream over curl through proxy http://***@proxy.example:3128`: the proxy
    /// without its credentials.
    private var upstreamSummary: String {
        var text = "upstream over \(upstream.transport.rawValue)"
        if let proxy = upstream.proxy { text += " through proxy \(proxy.redacted)" }
        return text
    }

    /// `audit chain relay-1 (signed checkpoints, key 0123456789abcdef; kept 365 days)`, or `audit off`.
    package var auditSummary: String {
        guard audit.enabled else { return "audit off" }
        let signing = audit.auditSigningKey.map { "signed checkpoints, key \($0.publicKey.keyID)" } ?? "unsigned"
        let derived =
            audit.instanceSuffixFile.map { ", id auto, suffix kept in \($0)" } ?? ""
        return "audit chain \(audit.instance) (\(signing); kept \(audit.retentionDays) days\(derived))"
    }

    /// The store without a password.
    package var storeSummary: String {
        switch store.location {
        case .sqlite(let path): "sqlite \(path)"
        case .sqliteInMemory: "sqlite in memory"
        case .postgres(let url):
            if let components = URLComponents(string: url) {
                "postgres \(components.host ?? "")\(components.port.map { ":\($0)" } ?? "")\(components.path)"
            } else {
                "postgres"
            }
        case nil: "unknown"
        }
    }
}
