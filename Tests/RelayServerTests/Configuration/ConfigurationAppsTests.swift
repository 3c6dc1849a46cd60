import Foundation
import RelayCore
import RelaySimulator
import Testing

@testable import RelayApplication

/// `[apps.<name>]`: several apps, each with its own provider sections, beside the default app of the top level.
@Suite struct ConfigurationAppsTests {
    /// A folder with an APNs key and a service account, and a configuration naming them for `beta`.
    private static func betaFolder() throws -> ConfigurationFolder {
        let credentials = try #require(ConfigurationFixtures.credentials)
        let folder = try ConfigurationFolder()
        try folder.write("beta/AuthKey.p8", credentials.apnsKeyPEM)
        try folder.write("beta/firebase.json", ConfigurationFixtures.serviceAccountJSON())
        try folder.write("beta/expo-token", "beta-expo-token\n")
        return folder
    }

    @Test func anAppHasItsOwnProviderSectionsBesideTheDefaultApp() throws {
        let folder = try Self.betaFolder()
        defer { folder.remove() }
        let toml = """
            [expo]
            access_token = "default-token"
            [apps.beta.apns]
            team_id = "ABCDE12345"
            key_id = "BETA123456"
            key_file = "beta/AuthKey.p8"
            topic = "com.example.beta"
            environment = "sandbox"
            [apps.beta.fcm]
            service_account_file = "beta/firebase.json"
            [apps.white-label.expo]
            """
        let configuration = try #require(parsedConfiguration(toml, directory: folder.path))
        #expect(configuration.appNames == ["default", "beta", "white-label"])
        #expect(configuration.apns == nil, "the default app has no APNs of its own")
        let beta = try #require(configuration.apps["beta"])
        #expect(beta.apns?.topic == "com.example.beta")
        #expect(beta.apns?.keyID == "BETA123456")
        #expect(beta.apns?.environment == .sandbox)
        #expect(beta.apns?.keyFile == folder.file("beta/AuthKey.p8"), "relative to the file's folder")
        #expect(beta.fcm?.projectID == "demo-project")
        #expect(beta.expo == nil, "no [apps.beta.expo]: beta does not send through Expo")
        #expect(beta.providers == [.apns, .fcm])
        let whiteLabel = try #require(configuration.apps["white-label"])
        #expect(whiteLabel.providers == [.expo], "an empty [apps.white-label.expo] is Expo without a token")
        #expect(whiteLabel.expo?.accessToken == nil)
        #expect(configuration.allApps[AppName.default]?.providers == [.expo])
        #expect(configuration.summary.contains("app beta: APNs (sandbox, topic com.example.beta, key BETA123456)"))
    }

    @Test func problemsAreNamedByTheAppsFullKey() throws {
        let folder = try Self.betaFolder()
        defer { folder.remove() }
        let toml = """
            [apps.beta.apns]
            team_id = "lower"
            key_id = "BETA123456"
            key_file = "beta/missing.p8"
            topic = "com.example.beta"
            [apps.beta.fcm]
            service_account_file = "beta/AuthKey.p8"
            [apps.beta.expo]
            receipt_delay_seconds = 60
            lisen = 1
            """
        let keys = configurationProblemKeys(toml, directory: folder.path)
        #expect(
            Set(keys)
                == [
                    "apps.beta.apns.team_id", "apps.beta.apns.key_file", "apps.beta.fcm.service_account_file",
                    "apps.beta.expo.receipt_delay_seconds", "apps.beta.expo.lisen",
                ])
        let problems = configurationProblems(toml, directory: folder.path)
        let delay = try #require(problems.first { $0.key == "apps.beta.expo.receipt_delay_seconds" })
        #expect(delay.message.contains("expo.receipt_delay_seconds"), "says where the key belongs")
    }

    @Test func aHalfCredentialInAnAppIsReportedUnderItsKey() {
        let keys = configurationProblemKeys(
            """
            [apps.beta.apns]
            topic = "com.example.beta"
            """)
        #expect(keys == ["apps.beta.apns.key_file"])
    }

    @Test(arguments: [
        ("[apps.Beta.apns]", "apps.Beta"),
        ("[apps.default.apns]", "apps.default"),
        ("[apps.beta.store]", "apps.beta.store"),
        ("[apps.a-name-that-is-much-longer-than-32.apns]", "apps.a-name-that-is-much-longer-than-32"),
        ("apps = 3", "apps"),
    ])
    func badAppTablesAreReported(toml: String, key: String) {
        #expect(configurationProblemKeys(toml) == [key])
    }

    @Test func theEnvironmentNamesAnAppsKeys() throws {
        let folder = try Self.betaFolder()
        defer { folder.remove() }
        let configuration = try #require(
            parsedConfiguration(
                "",
                directory: folder.path,
                environment: [
                    "PUSHRELAY_APPS_WHITE_LABEL_FCM_SERVICE_ACCOUNT_FILE": "beta/firebase.json",
                    "PUSHRELAY_APPS_BETA_EXPO_ACCESS_TOKEN_FILE": "beta/expo-token",
                ]
            ))
        #expect(configuration.appNames == ["default", "beta", "white-label"])
        #expect(configuration.apps["white-label"]?.fcm?.projectID == "demo-project")
        #expect(configuration.apps["beta"]?.expo?.accessToken?.value == "beta-expo-token")
        #expect(
            ConfigurationKey.apnsKeyFile.inApp("white-label").environmentName
                == "PUSHRELAY_APPS_WHITE_LABEL_APNS_KEY_FILE")
        #expect(
            ConfigurationKey.key(forEnvironmentName: "PUSHRELAY_APPS_BETA_EXPO_ACCESS_TOKEN")
                == ConfigurationKey.expoAccessToken.inApp("beta"))
        #expect(ConfigurationKey.key(forEnvironmentName: "PUSHRELAY_APPS_DEFAULT_APNS_KEY_FILE") == nil)
        let problems = configurationProblems("", environment: ["PUSHRELAY_APPS_BETA_APNS_TOPIC": "com.example.beta"])
        #expect(problems.map(\.key) == ["apps.beta.apns.key_file"], "a half credential")
        #expect(problems.first?.message.contains("PUSHRELAY_APPS_BETA_APNS_TOPIC") == true, "naming its variable")
    }

    @Test func checkConfigListsAnAppsKeysWithTheirSource() throws {
        let folder = try Self.betaFolder()
        defer { folder.remove() }
        let loaded = try RelayConfiguration.parseWithProvenance(
            toml: """
                [apps.beta.expo]
                access_token = "beta-secret-token"
                """,
            directory: folder.path,
            environment: ["PUSHRELAY_APPS_BETA_EXPO_ENDPOINT": "https://expo.example.com"]
        )
        let set = loaded.provenance.explicit.map { "\($0.key.path)=\($0.value ?? "")" }
        #expect(
            set == ["apps.beta.expo.access_token=(secret)", "apps.beta.expo.endpoint=\"https://expo.example.com\""])
        #expect(
            loaded.provenance.source(of: ConfigurationKey.expoEndpoint.inApp("beta"))
                == .environment("PUSHRELAY_APPS_BETA_EXPO_ENDPOINT"))
    }
}
