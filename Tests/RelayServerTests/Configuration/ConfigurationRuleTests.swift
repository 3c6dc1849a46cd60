import Foundation
import Logging
import NIOCore
import RelayCore
import RelayProviders
import RelaySimulator
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Each rule with a passing and a failing case; failures are asserted by the problem's key.
@Suite struct ConfigurationRuleTests {
    // MARK: - Unknown names

    @Test func anUnknownSectionIsReportedWithASuggestion() {
        let problems = configurationProblems("[srever]\nlisten = \"0.0.0.0:8080\"")
        #expect(problems == [.init(key: "srever", message: "unknown section [srever]; did you mean [server]?")])
    }

    @Test func anUnknownSectionFarFromAnyIsReportedWithoutASuggestion() {
        #expect(configurationProblems("[metrics]") == [.init(key: "metrics", message: "unknown section [metrics]")])
    }

    @Test func anUnknownKeyIsReportedWithASuggestion() {
        let problems = configurationProblems("[server]\nlisen = \"0.0.0.0:8080\"")
        #expect(problems == [.init(key: "server.lisen", message: "unknown key; did you mean server.listen?")])
    }

    @Test func aKeyInTheWrongSectionPointsToItsSection() {
        let problems = configurationProblems("[server]\ntimeout_ms = 500")
        #expect(problems.map(\.key) == ["server.timeout_ms"])
        #expect(problems.first?.message.contains("did you mean upstream.timeout_ms?") == true)
    }

    @Test func aKeyOutsideAnySectionIsReported() {
        let problems = configurationProblems("listen = \"0.0.0.0:8080\"")
        #expect(problems.map(\.key) == ["listen"])
        #expect(problems.first?.message.contains("server.listen") == true)
    }

    @Test func aNestedTableIsAnUnknownKey() {
        #expect(configurationProblemKeys("[apns.sandbox]\nendpoint = \"https://x.example\"") == ["apns.sandbox"])
    }

    @Test func aSectionThatIsNotATableIsReported() {
        #expect(configurationProblemKeys("server = 8080") == ["server"])
    }

    // MARK: - Types

    @Test(arguments: [
        ("[server]\nlisten = 8080", "server.listen", "expected a string, found an integer"),
        ("[upstream]\nmax_connections = \"2\"", "upstream.max_connections", "expected an integer, found a string"),
        ("[upstream]\ntimeout_ms = 1.5", "upstream.timeout_ms", "expected an integer, found a floating-point number"),
        (
            "[server]\ntrusted_proxies = \"10.0.0.0/8\"", "server.trusted_proxies",
            "expected an array of strings, found a string"
        ),
        (
            "[server]\ntrusted_proxies = [\"10.0.0.0/8\", 3]", "server.trusted_proxies",
            "expected an array of strings, but item 2 is an integer"
        ),
        ("[limits]\nrate_per_second = true", "limits.rate_per_second", "expected a number, found a boolean"),
        ("[apns]\nenvironment = 1979-05-27", "apns.environment", "expected a string, found a date"),
    ])
    func aValueOfTheWrongTypeIsReported(toml: String, key: String, message: String) {
        #expect(configurationProblems(toml) == [.init(key: key, message: message)])
    }

    @Test func aNumberAcceptsIntegersAndFractions() throws {
        #expect(parsedConfiguration("[limits]\nrate_per_second = 3")?.limits.ratePerSecond == 3)
        #expect(parsedConfiguration("[limits]\nrate_per_second = 0.5")?.limits.ratePerSecond == 0.5)
    }

    @Test func anEmptyStringCountsAsUnset() {
        let configuration = parsedConfiguration("[server]\nlisten = \"\"\ntls_cert_file = \"\"\n[apns]\nteam_id = \"\"")
        #expect(configuration?.server.listen == .init(host: "0.0.0.0", port: 8080))
    }

    // MARK: - Ranges

    @Test(arguments: [
        ("[upstream]\nmax_connections = 0", "upstream.max_connections"),
        ("[upstream]\nmax_concurrent_streams = 0", "upstream.max_concurrent_streams"),
        ("[upstream]\ntimeout_ms = 99", "upstream.timeout_ms"),
        ("[upstream]\nmax_attempts = 0", "upstream.max_attempts"),
        ("[upstream]\nmax_attempts = 11", "upstream.max_attempts"),
        ("[upstream]\nretry_window_seconds = -1", "upstream.retry_window_seconds"),
        ("[upstream]\nretry_window_seconds = 86401", "upstream.retry_window_seconds"),
        ("[upstream]\nmax_attempts_after_timeout = -1", "upstream.max_attempts_after_timeout"),
        ("[upstream]\nmax_attempts_after_timeout = 11", "upstream.max_attempts_after_timeout"),
        ("[limits]\nrate_per_second = 0", "limits.rate_per_second"),
        ("[limits]\nrate_per_second = -2.5", "limits.rate_per_second"),
        ("[limits]\nburst = 0", "limits.burst"),
        ("[limits]\ndaily_quota = -1", "limits.daily_quota"),
        ("[limits]\nper_device_per_minute = 0", "limits.per_device_per_minute"),
        ("[limits]\ncritical_reserve_per_hour = -1", "limits.critical_reserve_per_hour"),
        ("[limits]\ncritical_per_device_per_minute = 0", "limits.critical_per_device_per_minute"),
        ("[audit]\nretention_days = 0", "audit.retention_days"),
        ("[receipts]\nttl_hours = 0", "receipts.ttl_hours"),
        ("[receipts]\nwait_ms = 99", "receipts.wait_ms"),
        ("[server]\nlisten = \"0.0.0.0:0\"", "server.listen"),
        ("[server]\nlisten = \"0.0.0.0:65536\"", "server.listen"),
    ])
    func aValueOutOfRangeIsReported(toml: String, key: String) {
        #expect(configurationProblemKeys(toml) == [key])
    }

    @Test(arguments: [
        "[upstream]\nmax_connections = 1",
        "[upstream]\nmax_concurrent_streams = 1",
        "[upstream]\ntimeout_ms = 100",
        "[upstream]\nmax_attempts = 1",
        "[upstream]\nmax_attempts = 10",
        "[upstream]\nretry_window_seconds = 0",
        "[upstream]\nretry_window_seconds = 86400",
        "[upstream]\nmax_attempts_after_timeout = 0",
        "[upstream]\nmax_attempts_after_timeout = 10",
        "[limits]\nrate_per_second = 0.01",
        "[limits]\nburst = 1",
        "[limits]\ndaily_quota = 1",
        "[limits]\nper_device_per_minute = 1",
        "[limits]\ncritical_reserve_per_hour = 0",
        "[limits]\ncritical_per_device_per_minute = 1",
        "[audit]\nretention_days = 1",
        "[receipts]\nttl_hours = 1",
        "[receipts]\nwait_ms = 100",
        "[server]\nlisten = \"0.0.0.0:1\"",
        "[server]\nlisten = \"0.0.0.0:65535\"",
    ])
    func aValueAtTheEdgeOfItsRangeIsAccepted(toml: String) {
        #expect(configurationProblems(toml).isEmpty)
    }

    @Test func theRangeMessageSaysWhatIsAllowed() {
        #expect(
            configurationProblems("[upstream]\ntimeout_ms = 5")
                == [.init(key: "upstream.timeout_ms", message: "must be at least 100, found 5")]
        )
    }

    // MARK: - listen

    @Test(arguments: [
        ("0.0.0.0:8080", "0.0.0.0", 8080),
        ("[::]:8080", "::", 8080),
        ("[::1]:443", "::1", 443),
        ("localhost:9000", "localhost", 9000),
        ("relay.internal.example:80", "relay.internal.example", 80),
    ])
    func aListenAddressIsHostAndPort(text: String, host: String, port: Int) {
        let configuration = parsedConfiguration("[server]\nlisten = \"\(text)\"")
        #expect(configuration?.server.listen == .init(host: host, port: port))
        #expect(configuration?.server.listen.description == text)
    }

    @Test(arguments: [
        "::1:8080", "0.0.0.0", "[::]8080", "[::1", "300.1.1.1:80", "my host:80", ":8080", "0.0.0.0:http", "[zz::]:80",
    ])
    func aMalformedListenAddressIsReported(text: String) {
        #expect(configurationProblemKeys("[server]\nlisten = \"\(text)\"") == ["server.listen"])
    }

    // MARK: - trusted_proxies

    @Test func trustedProxiesAcceptNetworksAndAddresses() {
        let proxies = ["10.0.0.0/8", "192.168.1.10", "fd00::/8", "::1", "0.0.0.0/0"]
        let toml = "[server]\ntrusted_proxies = [\(proxies.map { "\"\($0)\"" }.joined(separator: ", "))]"
        #expect(parsedConfiguration(toml)?.server.trustedProxies == proxies)
    }

    @Test(arguments: ["10.0.0.0/33", "fd00::/129", "10.0.0/8", "proxy.example", "10.0.0.0/8/1", "10.0.0.0/x"])
    func aMalformedTrustedProxyIsReported(text: String) {
        #expect(configurationProblemKeys("[server]\ntrusted_proxies = [\"\(text)\"]") == ["server.trusted_proxies"])
    }

    @Test func eachMalformedTrustedProxyIsReported() {
        let problems = configurationProblems("[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"bad\", \"worse/99\"]")
        #expect(problems.map(\.key) == ["server.trusted_proxies", "server.trusted_proxies"])
        #expect(problems.first?.message.contains("\"bad\"") == true)
    }

    // MARK: - store.url

    @Test(arguments: [
        ("sqlite://pushrelay.db", RelayConfiguration.Store.Location.sqlite(path: "/srv/relay/pushrelay.db")),
        ("sqlite://data/../db/relay.db", .sqlite(path: "/srv/relay/db/relay.db")),
        ("sqlite:///var/lib/pushrelay/pushrelay.db", .sqlite(path: "/var/lib/pushrelay/pushrelay.db")),
        ("sqlite://:memory:", .sqliteInMemory),
        ("postgres://relay@db.internal:5432/pushrelay", .postgres(url: "postgres://relay@db.internal:5432/pushrelay")),
        ("postgresql://relay@db/pushrelay", .postgres(url: "postgresql://relay@db/pushrelay")),
    ])
    func aStoreURLIsSQLiteOrPostgres(url: String, location: RelayConfiguration.Store.Location) {
        let configuration = parsedConfiguration(
            "[store]\nurl = \"\(url)\"\n\(ConfigurationFixtures.journalKeyLine)", directory: "/srv/relay")
        #expect(configuration?.store.url == url)
        #expect(configuration?.store.location == location)
    }

    @Test(arguments: ["mysql://db/relay", "sqlite://", "postgres:///relay", "pushrelay.db", "sqlite:pushrelay.db"])
    func aStoreURLOfAnotherKindIsReported(url: String) {
        #expect(configurationProblemKeys("[store]\nurl = \"\(url)\"") == ["store.url"])
    }

    @Test func aStoreURLIsNeverQuoted() {
        let problems = configurationProblems("[store]\nurl = \"postgres://relay:hunter2@/relay\"")
        #expect(problems.map(\.key) == ["store.url"])
        #expect(!problems.description.contains("hunter2"))
    }

    // MARK: - store.journal_key_file, server.drain_seconds and max_pending_notifications

    @Test func aPostgreSQLStoreNeedsTheSharedJournalKey() {
        let problems = configurationProblems("[store]\nurl = \"postgres://relay@db/pushrelay\"")
        #expect(problems.map(\.key) == ["store.journal_key_file"])
        #expect(problems.first?.message.hasPrefix("required with a PostgreSQL store") == true)
        // SQLite keeps its own beside the database; memory needs none.
        #expect(configurationProblems("[store]\nurl = \"sqlite://relay.db\"").isEmpty)
        #expect(configurationProblems("[store]\nurl = \"sqlite://:memory:\"").isEmpty)
    }

    @Test func aJournalKeyFileHolds32BytesAsBase64OrRaw() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let bytes = (0..<32).map { UInt8($0 * 7 % 256) }
        try Data(bytes).write(to: URL(fileURLWithPath: folder.file("raw.key")))
        try folder.write("text.key", "  \(Data(bytes).base64EncodedString())\n")
        try folder.write("short.key", Data(bytes.prefix(16)).base64EncodedString())
        try folder.write("words.key", "not a key at all")
        for name in ["raw.key", "text.key"] {
            let configuration = parsedConfiguration(
                "[store]\njournal_key_file = \"\(name)\"", directory: folder.path)
            #expect(configuration?.store.journalKeyFile == folder.file(name))
            #expect(configuration?.store.journalKeyPath == folder.file(name))
            #expect(configuration?.store.configuredJournalKey != nil)
        }
        let short = configurationProblems("[store]\njournal_key_file = \"short.key\"", directory: folder.path)
        #expect(short.map(\.key) == ["store.journal_key_file"])
        #expect(short.first?.message.contains("holds 16 bytes, not the 32 of a journal key") == true)
        let words = configurationProblems("[store]\njournal_key_file = \"words.key\"", directory: folder.path)
        #expect(words.first?.message.contains("neither base64 text of 32 bytes nor 32 raw bytes") == true)
        let missing = configurationProblems("[store]\njournal_key_file = \"gone.key\"", directory: folder.path)
        #expect(missing.map(\.key) == ["store.journal_key_file"])
        #expect(missing.first?.message.hasPrefix("file \(folder.file("gone.key")) does not exist") == true)
    }

    @Test func theDrainAndTheQueueBoundAreChecked() {
        let configuration = parsedConfiguration("[server]\ndrain_seconds = 0\nmax_pending_notifications = 100")
        #expect(configuration?.server.drainSeconds == 0)
        #expect(configuration?.server.maxPendingNotifications == 100)
        #expect(RelayConfiguration.Server().drainSeconds == 20)
        #expect(RelayConfiguration.Server().maxPendingNotifications == 20_000)
        #expect(
            configurationProblemKeys("[server]\ndrain_seconds = -1\nmax_pending_notifications = 99")
                == ["server.drain_seconds", "server.max_pending_notifications"])
    }

    // MARK: - Choices and endpoints

    @Test func enumeratedValuesAreChecked() {
        let configuration = parsedConfiguration(
            "[apns]\nenvironment = \"sandbox\"\n[logging]\nformat = \"JSON\"\nlevel = \"warning\""
        )
        #expect(configuration?.logging == .init(format: .json, level: .warning))
        #expect(
            configurationProblems("[apns]\nenvironment = \"prod\"")
                == [
                    .init(
                        key: "apns.environment",
                        message: "expected one of \"production\", \"sandbox\", found \"prod\""
                    )
                ]
        )
        #expect(
            configurationProblemKeys("[logging]\nformat = \"xml\"\nlevel = \"verbose\"") == [
                "logging.format", "logging.level",
            ]
        )
    }

    @Test(arguments: ["apns.endpoint", "apns.sandbox_endpoint", "fcm.endpoint", "expo.endpoint"])
    func anEndpointIsAnHTTPSURL(key: String) {
        let parts = key.split(separator: ".")
        let valid = "[\(parts[0])]\n\(parts[1]) = \"https://gateway.example.com:8443/prefix/\""
        #expect(configurationProblems(valid).isEmpty)
        for invalid in [
            "http://gateway.example.com", "gateway.example.com", "https://", "https://user:pw@gateway.example.com",
            "https://gateway.example.com?x=1",
        ] {
            #expect(configurationProblemKeys("[\(parts[0])]\n\(parts[1]) = \"\(invalid)\"") == [key], "\(invalid)")
        }
    }

    @Test func anEndpointLosesItsTrailingSlash() {
        let configuration = parsedConfiguration("[expo]\nendpoint = \"https://expo.example.com/\"")
        #expect(configuration?.expo.endpoint == "https://expo.example.com")
    }

    // MARK: - TLS files

    @Test func bothTLSFilesServeHTTPS() throws {
        let identity = try #require(ConfigurationFixtures.identity)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let certificate = try folder.write("tls/relay.crt", identity.certificatePEM)
        let key = try folder.write("tls/relay.key", identity.privateKeyPEM)
        let toml = "[server]\ntls_cert_file = \"tls/relay.crt\"\ntls_key_file = \"tls/relay.key\""
        let configuration = parsedConfiguration(toml, directory: folder.path)
        #expect(configuration?.server.tlsCertFile == certificate)
        #expect(configuration?.server.tlsKeyFile == key)
        #expect(configuration?.server.usesTLS == true)
    }

    @Test func oneTLSFileWithoutTheOtherIsReported() throws {
        let identity = try #require(ConfigurationFixtures.identity)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("relay.crt", identity.certificatePEM)
        try folder.write("relay.key", identity.privateKeyPEM)
        let onlyCertificate = configurationProblems("[server]\ntls_cert_file = \"relay.crt\"", directory: folder.path)
        #expect(
            onlyCertificate == [
                .init(
                    key: "server.tls_key_file",
                    message: "required when server.tls_cert_file is set: set both TLS files or neither"
                )
            ]
        )
        #expect(
            configurationProblemKeys("[server]\ntls_key_file = \"relay.key\"", directory: folder.path) == [
                "server.tls_cert_file"
            ]
        )
    }

    @Test func aTLSFileThatIsMissingOrNotPEMIsReported() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("garbage.pem", "not a certificate")
        let problems = configurationProblems(
            "[server]\ntls_cert_file = \"garbage.pem\"\ntls_key_file = \"missing.key\"",
            directory: folder.path
        )
        #expect(
            problems == [
                .init(
                    key: "server.tls_cert_file",
                    message: "file \(folder.file("garbage.pem")) holds no PEM certificate"
                ),
                .init(
                    key: "server.tls_key_file",
                    message: "file \(folder.file("missing.key")) does not exist "
                        + "(relative paths resolve against \(folder.path))"
                ),
            ]
        )
    }

    @Test func aCAFileMustHoldCertificates() throws {
        let identity = try #require(ConfigurationFixtures.identity)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = try folder.write("certs/upstream-ca.pem", identity.certificatePEM)
        try folder.write("certs/empty.pem", "")
        #expect(
            parsedConfiguration("[upstream]\nca_file = \"certs/upstream-ca.pem\"", directory: folder.path)?.upstream
                .caFile == path
        )
        #expect(
            configurationProblemKeys("[upstream]\nca_file = \"certs/empty.pem\"", directory: folder.path) == [
                "upstream.ca_file"
            ]
        )
        #expect(
            configurationProblemKeys("[upstream]\nca_file = \"certs\"", directory: folder.path) == ["upstream.ca_file"]
        )
    }

    // MARK: - APNs

    private static func apnsTOML(keyFile: String = "AuthKey.p8", omitting omitted: Set<String> = []) -> String {
        var lines = ["[apns]", "key_file = \"\(keyFile)\""]
        let values = ["team_id": "ABCDE12345", "key_id": "ABC123DEFG", "topic": "com.example.app"]
        for (key, value) in values.sorted(by: { $0.key < $1.key }) where !omitted.contains(key) {
            lines.append("\(key) = \"\(value)\"")
        }
        return lines.joined(separator: "\n")
    }

    @Test func aCompleteAPNsSectionConfiguresAPNs() throws {
        let credentials = try #require(ConfigurationFixtures.credentials)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let keyPath = try folder.write("AuthKey.p8", credentials.apnsKeyPEM + "\n\n")
        let apns = try #require(parsedConfiguration(Self.apnsTOML(), directory: folder.path)?.apns)
        #expect(apns.teamID == "ABCDE12345")
        #expect(apns.keyID == "ABC123DEFG")
        #expect(apns.topic == "com.example.app")
        #expect(apns.keyFile == keyPath)
        #expect(apns.keyPEM.value == credentials.apnsKeyPEM.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(apns.environment == .production)
        #expect(apns.endpoint(for: .production) == "https://api.push.apple.com")
        #expect(apns.endpoint(for: .sandbox) == "https://api.sandbox.push.apple.com")
    }

    @Test func aKeyFileNeedsTeamKeyIDAndTopic() throws {
        let credentials = try #require(ConfigurationFixtures.credentials)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("AuthKey.p8", credentials.apnsKeyPEM)
        let problems = configurationProblems(
            Self.apnsTOML(omitting: ["team_id", "key_id", "topic"]),
            directory: folder.path
        )
        #expect(problems.map(\.key) == ["apns.team_id", "apns.key_id", "apns.topic"])
        #expect(problems.first?.message == "required when apns.key_file is set")
    }

    @Test func credentialsWithoutAKeyFileAreReported() {
        let problems = configurationProblems("[apns]\nteam_id = \"ABCDE12345\"\ntopic = \"com.example.app\"")
        #expect(
            problems == [
                .init(
                    key: "apns.key_file",
                    message: "required when apns.team_id, apns.topic are set; without it APNs is not configured"
                )
            ]
        )
    }

    @Test func teamAndKeyIDsAreAppleIDs() throws {
        let credentials = try #require(ConfigurationFixtures.credentials)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("AuthKey.p8", credentials.apnsKeyPEM)
        let toml =
            "[apns]\nkey_file = \"AuthKey.p8\"\nteam_id = \"abc\"\nkey_id = \"ABC123DEFG1\"\n"
            + "topic = \"com.example app\""
        #expect(
            configurationProblemKeys(toml, directory: folder.path) == ["apns.team_id", "apns.key_id", "apns.topic"]
        )
    }

    @Test func aKeyFileMustHoldAP256Key() throws {
        let identity = try #require(ConfigurationFixtures.identity)
        let credentials = try #require(ConfigurationFixtures.credentials)
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("rsa.p8", credentials.fcmPrivateKeyPEM)
        try folder.write("cert.p8", identity.certificatePEM)
        for file in ["rsa.p8", "cert.p8"] {
            let problems = configurationProblems(Self.apnsTOML(keyFile: file), directory: folder.path)
            #expect(
                problems == [
                    .init(
                        key: "apns.key_file",
                        message: "file \(folder.file(file)) is not a PEM P-256 private key (an APNs .p8 signing key)"
                    )
                ]
            )
        }
        let missing = configurationProblems(Self.apnsTOML(keyFile: "/nonexistent/AuthKey.p8"), directory: folder.path)
        #expect(missing == [.init(key: "apns.key_file", message: "file /nonexistent/AuthKey.p8 does not exist")])
    }

    // MARK: - FCM

    @Test func aServiceAccountConfiguresFCM() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = try folder.write("secrets/firebase.json", ConfigurationFixtures.serviceAccountJSON())
        let toml = "[fcm]\nservice_account_file = \"secrets/firebase.json\""
        let fcm = try #require(parsedConfiguration(toml, directory: folder.path)?.fcm)
        #expect(fcm.serviceAccountFile == path)
        #expect(fcm.projectID == "demo-project")
        #expect(fcm.clientEmail == "relay@demo-project.iam.gserviceaccount.com")
        #expect(fcm.privateKeyID == "0123456789abcdef")
        #expect(fcm.tokenURI == "https://oauth2.googleapis.com/token")
        #expect(fcm.endpoint == "https://fcm.googleapis.com")
        #expect(fcm.serviceAccount.projectID == "demo-project")
        #expect(fcm.serviceAccount.privateKey.contains("MIIEfake-service-account-secret"))
    }

    @Test func aServiceAccountMustHaveTheFieldsFCMNeeds() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let path = try folder.write(
            "sa.json",
            ConfigurationFixtures.serviceAccountJSON(omitting: ["client_email", "token_uri"])
        )
        let problems = configurationProblems("[fcm]\nservice_account_file = \"sa.json\"", directory: folder.path)
        #expect(
            problems == [
                .init(
                    key: "fcm.service_account_file",
                    message: "file \(path) lacks client_email, token_uri (expected a service-account key file)"
                )
            ]
        )
    }

    @Test func aServiceAccountMustBeJSONOfTheRightType() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("not.json", "project_id = demo")
        try folder.write("user.json", ConfigurationFixtures.serviceAccountJSON(type: "authorized_user"))
        try folder.write("badkey.json", ConfigurationFixtures.serviceAccountJSON(privateKey: "not a pem"))
        for file in ["not.json", "user.json", "badkey.json", "missing.json"] {
            #expect(
                configurationProblemKeys("[fcm]\nservice_account_file = \"\(file)\"", directory: folder.path)
                    == ["fcm.service_account_file"],
                "\(file)"
            )
        }
    }

    // MARK: - Expo

    @Test func anInlineAccessTokenIsUsed() {
        let configuration = parsedConfiguration("[expo]\naccess_token = \" expo-inline-token \"")
        #expect(configuration?.expo.accessToken?.value == "expo-inline-token")
    }

    @Test func anAccessTokenFileIsReadAndTrimmed() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("secrets/expo-access-token", "  expo-file-token\n")
        let configuration = parsedConfiguration(
            "[expo]\naccess_token_file = \"secrets/expo-access-token\"",
            directory: folder.path
        )
        #expect(configuration?.expo.accessToken?.value == "expo-file-token")
    }

    @Test func anAccessTokenAndAnAccessTokenFileExcludeEachOther() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("token", "expo-file-token")
        let problems = configurationProblems(
            "[expo]\naccess_token = \"expo-inline-token\"\naccess_token_file = \"token\"",
            directory: folder.path
        )
        #expect(
            problems == [
                .init(
                    key: "expo.access_token_file",
                    message: "set at most one of expo.access_token and expo.access_token_file"
                )
            ]
        )
    }

    @Test func theReceiptDelayIsFifteenMinutesUnlessSet() {
        #expect(parsedConfiguration("")?.expo.receiptDelaySeconds == 900)
        #expect(parsedConfiguration("[expo]\nreceipt_delay_seconds = 1")?.expo.receiptDelaySeconds == 1)
        #expect(parsedConfiguration("[expo]\nreceipt_delay_seconds = 3600")?.expo.receiptDelaySeconds == 3600)
        let overridden = parsedConfiguration(
            "[expo]\nreceipt_delay_seconds = 3600",
            environment: ["PUSHRELAY_EXPO_RECEIPT_DELAY_SECONDS": "120"]
        )
        #expect(overridden?.expo.receiptDelaySeconds == 120)
        #expect(overridden?.summary.contains("Expo (no access token; receipts checked 120 s after sending)") == true)
    }

    @Test(arguments: [
        ("0", "must be at least 1, found 0"),
        ("-5", "must be at least 1, found -5"),
        ("\"x\"", "expected an integer, found a string"),
        ("1.5", "expected an integer, found a floating-point number"),
    ])
    func aReceiptDelayThatIsNotAPositiveIntegerIsRefusedByItsKey(value: String, message: String) {
        #expect(
            configurationProblems("[expo]\nreceipt_delay_seconds = \(value)")
                == [.init(key: "expo.receipt_delay_seconds", message: message)]
        )
    }

    @Test(arguments: [
        ("0", "must be at least 1, found 0"), ("-5", "must be at least 1, found -5"), ("x", "expected an integer"),
    ])
    func aReceiptDelayOverrideThatIsNotAPositiveIntegerIsRefusedByItsVariable(text: String, message: String) {
        #expect(
            configurationProblems("", environment: ["PUSHRELAY_EXPO_RECEIPT_DELAY_SECONDS": text])
                == [.init(key: "PUSHRELAY_EXPO_RECEIPT_DELAY_SECONDS", message: message)]
        )
    }

    @Test func anEmptyOrMalformedAccessTokenIsReported() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let empty = try folder.write("empty", " \n")
        try folder.write("spaced", "expo token\n")
        #expect(
            configurationProblems("[expo]\naccess_token_file = \"empty\"", directory: folder.path)
                == [.init(key: "expo.access_token_file", message: "file \(empty) is empty")]
        )
        #expect(
            configurationProblemKeys("[expo]\naccess_token_file = \"spaced\"", directory: folder.path) == [
                "expo.access_token_file"
            ]
        )
        #expect(configurationProblemKeys("[expo]\naccess_token = \"expo\\ttoken\"") == ["expo.access_token"])
    }
}

/// `[server]`'s limits on what a client's connection may cost (issue 20): read from the file, the documented defaults
/// when absent, refused out of range, and handed to the listener as they were written.
@Suite struct ServerLimitsConfigurationTests {
    @Test func theLimitsAreReadAndReachTheListener() throws {
        let configuration = try #require(
            parsedConfiguration(
                """
                [server]
                header_timeout_ms = 2500
                body_timeout_ms = 7000
                body_min_bytes_per_second = 0
                idle_timeout_ms = 45000
                max_connections = 300
                """))
        let limits = ConnectionLimits(configuration.server)
        #expect(limits.headerTimeout == .milliseconds(2_500))
        #expect(limits.bodyTimeout == .milliseconds(7_000))
        #expect(limits.bodyMinimumBytesPerSecond == 0)
        #expect(limits.idleTimeout == .milliseconds(45_000))
        #expect(limits.maxConnections == 300)
    }

    @Test func withoutThemTheDefaultsApply() throws {
        let server = try #require(parsedConfiguration("[server]\nlisten = \"127.0.0.1:8080\"")).server
        #expect(server.headerTimeoutMs == 10_000)
        #expect(server.bodyTimeoutMs == 30_000)
        #expect(server.bodyMinBytesPerSecond == 1_024)
        #expect(server.idleTimeoutMs == 60_000)
    }

    @Test(arguments: [
        ("[server]\nheader_timeout_ms = 99", "server.header_timeout_ms"),
        ("[server]\nbody_timeout_ms = 99", "server.body_timeout_ms"),
        ("[server]\nbody_min_bytes_per_second = -1", "server.body_min_bytes_per_second"),
        ("[server]\nidle_timeout_ms = 0", "server.idle_timeout_ms"),
        ("[server]\nmax_connections = 0", "server.max_connections"),
    ])
    func aLimitOutOfRangeIsReportedByItsKey(toml: String, key: String) {
        #expect(configurationProblemKeys(toml) == [key])
    }
}
