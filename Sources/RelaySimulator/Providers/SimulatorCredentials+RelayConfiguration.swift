extension SimulatorCredentials {
    /// The `relay.conf` sections that point a relay at a simulator using these credentials: `[upstream]` (its CA),
    /// `[apns]`, `[fcm]` and `[expo]`. Paths should be absolute, so the text works wherever it is merged. A caller adds
    /// its own `[server]`, `[store]` or `[limits]` sections beside it.
    /// `transport` sets `[upstream] transport` ("nghttp2" or "curl"); `nil` leaves the relay's default.
    package func relayConfiguration(caFile: String, files: Files, endpoint: String, transport: String? = nil) -> String
    {
        """
        [upstream]
        ca_file = \(Self.tomlString(caFile))\(transport.map { "\ntransport = \(Self.tomlString($0))" } ?? "")

        """ + credentialSections(prefix: "", files: files, endpoint: endpoint) + """
            [expo]
            endpoint = \(Self.tomlString(endpoint))

            """
    }

    /// The sections of an app beside the default one, `[apps.<app>.apns]` and `[apps.<app>.fcm]`, that point it at a
    /// simulator using these credentials (APNs in the sandbox environment); the `[upstream]` section must trust that
    /// simulator's CA too.
    package func appRelayConfiguration(app: String, files: Files, endpoint: String) -> String {
        credentialSections(prefix: "apps.\(app).", files: files, endpoint: endpoint)
    }

    /// `[<prefix>apns]` and `[<prefix>fcm]` with these credentials, sending to `endpoint` (APNs in the sandbox).
    private func credentialSections(prefix: String, files: Files, endpoint: String) -> String {
        """
        [\(prefix)apns]
        team_id = \(Self.tomlString(apnsTeamID))
        key_id = \(Self.tomlString(apnsKeyID))
        key_file = \(Self.tomlString(files.apnsKey))
        topic = \(Self.tomlString(apnsBundleID))
        environment = "sandbox"
        endpoint = \(Self.tomlString(endpoint))
        sandbox_endpoint = \(Self.tomlString(endpoint))

        [\(prefix)fcm]
        service_account_file = \(Self.tomlString(files.serviceAccount))
        endpoint = \(Self.tomlString(endpoint))

        """
    }

    /// Demo credentials of a second app, `beta`: another APNs key and bundle id, another FCM project and account.
    package static func beta() throws -> SimulatorCredentials {
        try SimulatorCredentials(
            apnsKeyID: "BETAKEY002",
            apnsBundleID: "com.example.oncall.beta",
            fcmProjectID: "beta-project",
            fcmClientEmail: "relay@beta-project.iam.gserviceaccount.com"
        )
    }

    /// A TOML basic string.
    package static func tomlString(_ value: String) -> String {
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case let control where control.value < 0x20 || control.value == 0x7F:
                let hex = String(control.value, radix: 16, uppercase: true)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return "\"\(escaped)\""
    }
}
