package import Crypto
internal import Foundation
package import _CryptoExtras

/// Fresh demo credentials for a ``ProviderSimulator``: an APNs signing key (P-256) and an FCM service account
/// (RSA-2048), written the way Apple and Google hand them out.
///
/// ```swift
/// let credentials = try SimulatorCredentials()
/// let simulator = try await ProviderSimulator.start(configuration: credentials.simulatorConfiguration())
/// let files = try credentials.write(to: directory, tokenURI: simulator.fcmTokenURI)
/// // files.apnsKey is AuthKey_DEMOKEY001.p8, files.serviceAccount is fcm-service-account.json
/// ```
package struct SimulatorCredentials: Sendable {
    /// The APNs key ID (the JWT `kid`), 10 characters like Apple's.
    package let apnsKeyID: String
    /// The APNs team ID (the JWT `iss`).
    package let apnsTeamID: String
    /// The app's bundle ID (the `apns-topic` of alert pushes).
    package let apnsBundleID: String
    package let apnsPrivateKey: P256.Signing.PrivateKey
    /// The FCM project.
    package let fcmProjectID: String
    /// The service account's `client_email`.
    package let fcmClientEmail: String
    /// The service account's `private_key_id`.
    package let fcmPrivateKeyID: String
    package let fcmPrivateKey: _RSA.Signing.PrivateKey

    /// Makes new keys.
    ///
    /// - Throws: When the RSA key cannot be generated.
    package init(
        apnsKeyID: String = "DEMOKEY001",
        apnsTeamID: String = "DEMOTEAM01",
        apnsBundleID: String = "com.example.oncall",
        fcmProjectID: String = "demo-project",
        fcmClientEmail: String = "relay@demo-project.iam.gserviceaccount.com"
    ) throws {
        self.apnsKeyID = apnsKeyID
        self.apnsTeamID = apnsTeamID
        self.apnsBundleID = apnsBundleID
        self.apnsPrivateKey = P256.Signing.PrivateKey()
        self.fcmProjectID = fcmProjectID
        self.fcmClientEmail = fcmClientEmail
        self.fcmPrivateKeyID = randomHex(byteCount: 20)
        self.fcmPrivateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    }

    /// The APNs key as Apple's `.p8` file holds it: PEM PKCS #8 (`BEGIN PRIVATE KEY`).
    package var apnsKeyPEM: String {
        self.apnsPrivateKey.pemRepresentation
    }

    /// The FCM key as a service-account file holds it: PEM PKCS #8 (`BEGIN PRIVATE KEY`).
    package var fcmPrivateKeyPEM: String {
        self.fcmPrivateKey.pkcs8PEMRepresentation
    }

    /// The public APNs keys by key ID, for ``ProviderSimulator/Configuration/APNs/keys``.
    package var apnsPublicKeys: [String: P256.Signing.PublicKey] {
        [self.apnsKeyID: self.apnsPrivateKey.publicKey]
    }

    /// The public FCM key, for ``ProviderSimulator/Configuration/FCM/publicKey``.
    package var fcmPublicKey: _RSA.Signing.PublicKey {
        self.fcmPrivateKey.publicKey
    }

    /// `base` with these credentials' team, bundle, key, project, e-mail and public key filled in.
    package func simulatorConfiguration(
        _ base: ProviderSimulator.Configuration = .init()
    ) -> ProviderSimulator.Configuration {
        var configuration = base
        configuration.apns.teamID = self.apnsTeamID
        configuration.apns.bundleID = self.apnsBundleID
        configuration.apns.keys.merge(self.apnsPublicKeys) { _, new in new }
        configuration.fcm.projectID = self.fcmProjectID
        configuration.fcm.clientEmail = self.fcmClientEmail
        configuration.fcm.publicKey = self.fcmPublicKey
        return configuration
    }

    /// The service-account JSON Google hands out, pointing at `tokenURI` (use ``ProviderSimulator/fcmTokenURI``).
    package func serviceAccountJSON(tokenURI: String) -> String {
        let document: SimulatorJSON = [
            "type": "service_account",
            "project_id": .string(self.fcmProjectID),
            "private_key_id": .string(self.fcmPrivateKeyID),
            "private_key": .string(self.fcmPrivateKeyPEM),
            "client_email": .string(self.fcmClientEmail),
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": .string(tokenURI),
            "universe_domain": "googleapis.com",
        ]
        return document.text + "\n"
    }

    /// The files ``write(to:tokenURI:)`` wrote.
    package struct Files: Sendable, Hashable {
        /// `AuthKey_<key id>.p8`.
        package var apnsKey: String
        /// `fcm-service-account.json`.
        package var serviceAccount: String
    }

    /// The file name of the APNs key, `AuthKey_<key id>.p8` as Apple names it.
    package var apnsKeyFileName: String {
        "AuthKey_\(self.apnsKeyID).p8"
    }

    /// The file name of the service account.
    package static let serviceAccountFileName = "fcm-service-account.json"

    /// Writes `AuthKey_<key id>.p8` and `fcm-service-account.json` into `directory` (created if needed), readable by
    /// the owner only, as private keys should be.
    ///
    /// - Returns: The paths written.
    @discardableResult
    package func write(to directory: String, tokenURI: String) throws -> Files {
        let fileManager = FileManager.default
        try fileManager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        let keyURL = base.appendingPathComponent(self.apnsKeyFileName)
        let accountURL = base.appendingPathComponent(Self.serviceAccountFileName)
        try Data(self.apnsKeyPEM.utf8).write(to: keyURL, options: .atomic)
        try Data(self.serviceAccountJSON(tokenURI: tokenURI).utf8).write(to: accountURL, options: .atomic)
        for url in [keyURL, accountURL] {
            try fileManager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        }
        return Files(apnsKey: keyURL.path, serviceAccount: accountURL.path)
    }
}
