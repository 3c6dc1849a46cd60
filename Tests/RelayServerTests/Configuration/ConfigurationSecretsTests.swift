import Foundation
import RelaySimulator
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Relative paths resolve against the configuration file's folder, and secrets stay out of every message.
@Suite struct ConfigurationSecretsTests {
    /// Writes a configuration with every provider configured through relative paths, in `folder/etc`.
    private static func writeFullConfiguration(in folder: ConfigurationFolder) throws -> String {
        let credentials = try #require(ConfigurationFixtures.credentials)
        let identity = try #require(ConfigurationFixtures.identity)
        try folder.write("etc/secrets/AuthKey_ABC123DEFG.p8", credentials.apnsKeyPEM)
        try folder.write("etc/secrets/firebase.json", ConfigurationFixtures.serviceAccountJSON())
        try folder.write("etc/secrets/expo-access-token", "expo-file-secret-token\n")
        try folder.write("etc/tls/relay.crt", identity.certificatePEM)
        try folder.write("etc/tls/relay.key", identity.privateKeyPEM)
        try folder.write("shared/upstream-ca.pem", identity.certificatePEM)
        return try folder.write(
            "etc/relay.conf",
            """
            [server]
            tls_cert_file = "tls/relay.crt"
            tls_key_file = "./tls/relay.key"
            [store]
            url = "sqlite://data/pushrelay.db"
            [upstream]
            ca_file = "../shared/upstream-ca.pem"
            [apns]
            team_id = "ABCDE12345"
            key_id = "ABC123DEFG"
            key_file = "secrets/AuthKey_ABC123DEFG.p8"
            topic = "com.example.app"
            [fcm]
            service_account_file = "secrets/firebase.json"
            [expo]
            access_token_file = "secrets/expo-access-token"
            """
        )
    }

    @Test func relativePathsResolveAgainstTheFilesFolder() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = try Self.writeFullConfiguration(in: folder)
        let configuration = try RelayConfiguration.load(path: path, environment: [:])
        #expect(configuration.server.tlsCertFile == folder.file("etc/tls/relay.crt"))
        #expect(configuration.server.tlsKeyFile == folder.file("etc/tls/relay.key"))
        #expect(configuration.store.directory == folder.file("etc"))
        #expect(configuration.store.location == .sqlite(path: folder.file("etc/data/pushrelay.db")))
        #expect(configuration.upstream.caFile == folder.file("shared/upstream-ca.pem"))
        #expect(configuration.apns?.keyFile == folder.file("etc/secrets/AuthKey_ABC123DEFG.p8"))
        #expect(configuration.fcm?.serviceAccountFile == folder.file("etc/secrets/firebase.json"))
        #expect(configuration.expo.accessToken?.value == "expo-file-secret-token")
        #expect(
            configuration.summary.hasPrefix(
                "APNs (production, topic com.example.app, key ABC123DEFG), FCM (project demo-project), "
                    + "Expo (with access token; receipts checked 900 s after sending)"
            )
        )
        #expect(configuration.summary.contains("over HTTPS"))
    }

    @Test func relativePathsFromTheEnvironmentResolveAgainstTheFilesFolderToo() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = try Self.writeFullConfiguration(in: folder)
        let configuration = try RelayConfiguration.load(
            path: path,
            environment: ["PUSHRELAY_UPSTREAM_CA_FILE": "tls/relay.crt", "PUSHRELAY_STORE_URL": "sqlite://other.db"]
        )
        #expect(configuration.upstream.caFile == folder.file("etc/tls/relay.crt"))
        #expect(configuration.store.location == .sqlite(path: folder.file("etc/other.db")))
    }

    @Test func aRelativeConfigurationPathResolvesAgainstTheWorkingDirectory() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = try Self.writeFullConfiguration(in: folder)
        let workingDirectory = FileManager.default.currentDirectoryPath
        // A relative path that walks up to the root and back down, so the test needs no chdir.
        let depth = workingDirectory.split(separator: "/").count
        let relative = String(repeating: "../", count: depth) + path.dropFirst()
        let configuration = try RelayConfiguration.load(path: relative, environment: [:])
        #expect(configuration.store.directory == folder.file("etc"))
    }

    @Test func secretsNeverAppearInDescriptions() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let credentials = try #require(ConfigurationFixtures.credentials)
        let path = try Self.writeFullConfiguration(in: folder)
        let configuration = try RelayConfiguration.load(path: path, environment: [:])
        var dumped = ""
        dump(configuration, to: &dumped)
        let keyBody = credentials.apnsKeyPEM.split(separator: "\n")[1]
        for text in [
            String(describing: configuration), String(reflecting: configuration), dumped, configuration.summary,
        ] {
            #expect(!text.contains("expo-file-secret-token"))
            #expect(!text.contains(keyBody))
            #expect(!text.contains("MIIEfake-service-account-secret"))
        }
        #expect(String(describing: configuration).contains("<redacted>"))
    }

    @Test func secretsNeverAppearInProblems() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        // Each secret in a place where it is rejected: the messages must not quote it.
        try folder.write("token", "expo leaked secret")
        try folder.write("AuthKey.p8", "-----BEGIN PRIVATE KEY-----\nleaked-apns-secret\n-----END PRIVATE KEY-----")
        try folder.write("sa.json", "{\"private_key\": \"leaked-fcm-secret\", \"project_id\": 3}")
        let toml = """
            [apns]
            team_id = "ABCDE12345"
            key_id = "ABC123DEFG"
            key_file = "AuthKey.p8"
            topic = "com.example.app"
            [fcm]
            service_account_file = "sa.json"
            [expo]
            access_token_file = "token"
            """
        let problems = configurationProblems(toml, directory: folder.path)
        #expect(problems.map(\.key) == ["apns.key_file", "fcm.service_account_file", "expo.access_token_file"])
        let inline = configurationProblems("[expo]\naccess_token = \"inline leaked secret\"")
        let overridden = configurationProblems(
            "[expo]\naccess_token_file = \"token\"",
            directory: folder.path,
            environment: ["PUSHRELAY_EXPO_ACCESS_TOKEN": "env leaked secret"]
        )
        #expect(inline.map(\.key) == ["expo.access_token"])
        #expect(overridden.map(\.key) == ["expo.access_token_file"])
        let description = ConfigurationError(problems: problems + inline + overridden).description
        #expect(!description.contains("leaked"))
    }

    @Test func aStorePasswordIsRedactedWhenPrinted() throws {
        let configuration = try RelayConfiguration.parse(
            toml: "[store]\nurl = \"postgres://relay:hunter2@db.internal:5432/pushrelay\"\n"
                + ConfigurationFixtures.journalKeyLine,
            directory: "/srv",
            environment: [:]
        )
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [String(describing: configuration), String(reflecting: configuration), dumped] {
            #expect(!text.contains("hunter2"))
            #expect(text.contains("postgres://relay:redacted@db.internal:5432/pushrelay"))
        }
        #expect(configuration.store.url == "postgres://relay:hunter2@db.internal:5432/pushrelay")
        #expect(configuration.store.location == .postgres(url: configuration.store.url))
    }

    @Test func aSecretIsRedactedWhenPrinted() {
        let secret = RelayConfiguration.Secret("hunter2")
        #expect("\(secret)" == "<redacted>")
        #expect(String(reflecting: secret) == "Secret(<redacted>)")
        #expect(Mirror(reflecting: secret).children.isEmpty)
        #expect(secret.value == "hunter2")
    }
}
