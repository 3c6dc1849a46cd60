import Foundation
import RelayCore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// `[audit]`: the chain id, the signing key, the checkpoint interval and retention.
@Suite struct ConfigurationAuditTests {
    @Test func theDefaultsWriteASignedNothingChainNamedAfterTheHost() throws {
        let audit = try #require(parsedConfiguration("")).audit
        #expect(audit.enabled)
        #expect(!audit.instance.isEmpty)
        #expect(RelayConfiguration.Audit.instanceProblem(audit.instance) == nil)
        #expect(audit.instance == RelayConfiguration.Audit.defaultInstance)
        #expect(audit.signingKey == nil && audit.signingKeyFile == nil)
        #expect(audit.checkpointIntervalSeconds == 60)
        #expect(audit.retentionDays == 365)
        #expect(audit.cliChain == audit.instance + ":cli")
        let settings = audit.logSettings
        #expect(settings.enabled && settings.chain == audit.instance && settings.signingKey == nil)
        #expect(settings.checkpointInterval == .seconds(60))
    }

    @Test(.timeLimit(.minutes(1))) func everyKeyIsRead() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let key = AuditSigningKey.generate()
        try folder.write("secrets/audit.key", key.base64 + "\n")
        let toml = """
            [audit]
            enabled = false
            instance = "relay-1.eu:a_b"
            signing_key_file = "secrets/audit.key"
            checkpoint_interval_seconds = 15
            retention_days = 30
            """
        let audit = try RelayConfiguration.parse(toml: toml, directory: folder.path, environment: [:]).audit
        #expect(!audit.enabled)
        #expect(audit.instance == "relay-1.eu:a_b")
        #expect(audit.signingKeyFile == folder.file("secrets/audit.key"))
        #expect(audit.auditSigningKey?.publicKey == key.publicKey)
        #expect(audit.checkpointIntervalSeconds == 15)
        #expect(audit.retentionDays == 30)
        let settings = audit.logSettings
        #expect(!settings.enabled)
        #expect(settings.chain == "relay-1.eu:a_b")
        #expect(settings.signingKey?.publicKey == key.publicKey)
        #expect(settings.checkpointInterval == .seconds(15))
        #expect(audit.cliChain == "relay-1.eu:a_b:cli")
    }

    @Test func theEnvironmentOverridesEveryKey() throws {
        let configuration = parsedConfiguration(
            "[audit]\nenabled = true\ninstance = \"file\"",
            environment: [
                "PUSHRELAY_AUDIT_ENABLED": "0", "PUSHRELAY_AUDIT_INSTANCE": "from-env",
                "PUSHRELAY_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "5",
            ]
        )
        #expect(configuration?.audit.enabled == false)
        #expect(configuration?.audit.instance == "from-env")
        #expect(configuration?.audit.checkpointIntervalSeconds == 5)
    }

    @Test(arguments: [
        ("[audit]\ninstance = \"relay one\"", "audit.instance", "letters, digits"),
        ("[audit]\ninstance = \"relay/1\"", "audit.instance", "found \"relay/1\""),
        ("[audit]\ninstance = \"relay-1:cli\"", "audit.instance", "must not end in \":cli\""),
        ("[audit]\ncheckpoint_interval_seconds = 0", "audit.checkpoint_interval_seconds", "at least 1, found 0"),
        ("[audit]\nretention_days = 0", "audit.retention_days", "at least 1, found 0"),
        ("[audit]\nenabled = \"yes\"", "audit.enabled", "expected true or false, found a string"),
        ("[audit]\nsigning_key_file = \"nope.key\"", "audit.signing_key_file", "does not exist"),
    ])
    func aBadValueIsReportedUnderItsKey(toml: String, key: String, message: String) {
        let problems = configurationProblems(toml)
        #expect(problems.map(\.key) == [key])
        #expect(problems.first?.message.contains(message) == true, "\(problems)")
    }

    @Test func aBadEnvironmentValueIsReportedUnderItsVariable() {
        let problems = configurationProblems("", environment: ["PUSHRELAY_AUDIT_INSTANCE": "a b"])
        #expect(problems.map(\.key) == ["PUSHRELAY_AUDIT_INSTANCE"])
        #expect(
            configurationProblemKeys("", environment: ["PUSHRELAY_AUDIT_ENABLED": "maybe"]) == [
                "PUSHRELAY_AUDIT_ENABLED"
            ])
    }

    @Test(.timeLimit(.minutes(1))) func aFileThatIsNotASigningKeyIsReportedWithoutItsContents() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        try folder.write("not-a-key", "this-is-not-base64-secret!")
        try folder.write("short-key", Data(repeating: 7, count: 16).base64EncodedString())
        for (file, reason) in [("not-a-key", "not base64"), ("short-key", "got 16 bytes")] {
            let problems = configurationProblems(
                "[audit]\nsigning_key_file = \"\(file)\"", directory: folder.path
            )
            #expect(problems.map(\.key) == ["audit.signing_key_file"])
            let message = problems.first?.message ?? ""
            #expect(message.contains(folder.file(file)) && message.contains(reason), "\(message)")
            #expect(!message.contains("this-is-not-base64-secret"))
        }
    }

    @Test(.timeLimit(.minutes(1))) func theSigningKeyNeverAppearsInDescriptionsOrTheSummary() throws {
        let folder = try ConfigurationFolder()
        defer { folder.remove() }
        let key = AuditSigningKey.generate()
        try folder.write("audit.key", key.base64)
        let configuration = try RelayConfiguration.parse(
            toml: "[audit]\nsigning_key_file = \"audit.key\"\ninstance = \"relay-7\"", directory: folder.path,
            environment: [:]
        )
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [
            String(describing: configuration), String(reflecting: configuration), dumped, configuration.summary,
        ] {
            #expect(!text.contains(key.base64))
        }
        #expect(configuration.summary.contains("audit chain relay-7 (signed checkpoints, key \(key.publicKey.keyID)"))
    }
}
