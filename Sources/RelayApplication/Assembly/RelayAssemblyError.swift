import RelayStore

/// Why a relay could not be built from a configuration that loaded: the configuration key at fault, and what went
/// wrong with it.
///
/// Loading validates every key it can without I/O beyond reading files; what remains is what only building can
/// find (a store that does not open, a key the crypto library refuses). Messages never quote a secret or the store
/// URL, which may hold a password.
///
/// ```
/// store.url: the store could not be opened: cannot open the SQLite database at /var/lib/pushrelay/relay.db: …
/// ```
package struct RelayAssemblyError: Error, Sendable, CustomStringConvertible {
    /// The key whose value could not be used.
    package let key: ConfigurationKey
    /// What went wrong, a sentence fragment without a trailing full stop.
    package let message: String

    private init(_ key: ConfigurationKey, _ message: String) {
        self.key = key
        self.message = message
    }

    /// `store.url` names no store (loading refuses such URLs, so only a configuration made in code gets here).
    static let notAStoreURL = Self(
        .storeURL,
        "is not a store URL; expected sqlite://<path> or postgres://user@host:port/database"
    )

    /// The folder of a SQLite database does not exist.
    static func storeFolder(_ problem: String) -> Self { Self(.storeURL, problem) }

    /// The store `store.url` names could not be opened.
    static func storeUnavailable(_ error: any Error) -> Self {
        Self(.storeURL, "the store could not be opened: \(reason(error))")
    }

    /// The store opened, but its schema could not be brought up to date.
    static func storeNotMigrated(_ error: any Error) -> Self {
        Self(.storeURL, "the store's schema could not be migrated: \(reason(error))")
    }

    /// The APNs signing key was read but is not a usable P-256 key.
    static func apnsKeyUnusable(_ error: any Error, app: String) -> Self {
        Self(ConfigurationKey.apnsKeyFile.inApp(app), "the APNs signing key could not be loaded: \(reason(error))")
    }

    /// The service account's private key is not a usable RSA key.
    static func fcmServiceAccountUnusable(_ error: any Error, app: String) -> Self {
        Self(
            ConfigurationKey.fcmServiceAccountFile.inApp(app),
            "the service account's private key could not be loaded: \(reason(error))")
    }

    /// The delivery journal's key could not be read or made.
    static func journalKeyUnusable(_ error: JournalKeyError) -> Self {
        Self(.storeJournalKeyFile, "the delivery journal key is not usable: \(error.message)")
    }

    /// A PostgreSQL store without `store.journal_key_file` (loading refuses it, so only a configuration made in code
    /// gets here).
    static let journalKeyMissing = Self(
        .storeJournalKeyFile,
        "required with a PostgreSQL store: every instance must seal the delivery journal with the same key"
    )

    /// A store's own message without its case name; anything else as it describes itself.
    private static func reason(_ error: any Error) -> String {
        if case .unavailable(let message)? = error as? StoreError { return message }
        return "\(error)"
    }

    /// `key: message`, as configuration problems are written.
    package var description: String { "\(key.path): \(message)" }
}
