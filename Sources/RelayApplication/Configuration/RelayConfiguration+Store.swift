internal import Foundation

extension RelayConfiguration {
    /// `[store]`: where tenants, keys, receipts and the audit log live.
    ///
    /// A PostgreSQL URL may hold a password, so the store's description, debug description and mirror show the URL
    /// with the password replaced by `redacted`.
    package struct Store: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// `url`: `sqlite://<path>` or `postgres://user:password@host:port/database`, as written.
        package var url: String
        /// The folder a relative SQLite path resolves against: the configuration file's folder.
        package var directory: String
        /// `journal_key_file`: where the delivery journal's key was read from, resolved; `nil` when unset (a SQLite
        /// store then keeps its own key beside the database, ``journalKeyPath``).
        package var journalKeyFile: String?
        /// The journal key read from ``journalKeyFile``, as base64, already checked to be one.
        package var journalKey: RelayConfiguration.Secret?
        /// `request_timeout_ms`: how long a request waits for the store to take writes its answer depends on
        /// (receipts written ahead, pending receipts with their journal entries); writes not taken by then are
        /// withdrawn, and the request is answered 503 `STORE_UNAVAILABLE`.
        package var requestTimeoutMs: Int
        /// `unsaved_limit`: how many writes of failed commits (receipts, usage counts, audit records) are held in
        /// memory and committed again until the store takes them; at the limit, new push requests are answered 503.
        package var unsavedLimit: Int
        /// `connect_timeout_seconds`: how long opening a PostgreSQL store waits, with exponential back-off, for the
        /// database to accept a connection (a database that starts after the relay); then the relay exits, naming
        /// the address.
        package var connectTimeoutSeconds: Int

        package init(
            url: String = "sqlite://pushrelay.db",
            directory: String,
            journalKeyFile: String? = nil,
            journalKey: RelayConfiguration.Secret? = nil,
            requestTimeoutMs: Int = 5_000,
            unsavedLimit: Int = 50_000,
            connectTimeoutSeconds: Int = 120
        ) {
            self.connectTimeoutSeconds = connectTimeoutSeconds
            self.requestTimeoutMs = requestTimeoutMs
            self.unsavedLimit = unsavedLimit
            self.url = url
            self.directory = directory
            self.journalKeyFile = journalKeyFile
            self.journalKey = journalKey
        }

        /// The journal key read from ``journalKeyFile``; `nil` when none was configured.
        package var configuredJournalKey: JournalKey? {
            // The configuration reader checked the key, so reading it again cannot fail.
            journalKey.flatMap { Data(base64Encoded: $0.value) }.flatMap { try? JournalKey(fileContents: $0) }
        }

        /// Where the journal key is: ``journalKeyFile``, else beside a SQLite database file
        /// (`<database>.journal-key`, made at start when missing); `nil` for a store in memory or PostgreSQL without
        /// the key (loading refuses the latter).
        package var journalKeyPath: String? {
            if let journalKeyFile { return journalKeyFile }
            if case .sqlite(let path)? = location { return JournalKey.defaultPath(besideDatabase: path) }
            return nil
        }

        /// The store ``url`` names, with a SQLite path made absolute; `nil` when ``url`` is not a store URL (loading
        /// rejects those, so a loaded configuration always has a location).
        package var location: Location? {
            try? Location(url: url, directory: directory)
        }

        /// Why a SQLite database cannot be where ``url`` says: its folder does not exist (a typo in the path would
        /// otherwise give a new, empty database without a word). `nil` for an existing folder, memory or PostgreSQL.
        package var folderProblem: String? {
            guard case .sqlite(let path)? = location else { return nil }
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue {
                return nil
            }
            return "the folder \(folder) of the SQLite database does not exist; create it, or correct the path"
        }

        /// The folder this instance keeps its own files in: the SQLite database's, else the journal key file's
        /// (PostgreSQL); `nil` for a store in memory, or PostgreSQL without a key file.
        package var stateFolder: String? {
            if case .sqlite(let path)? = location { return URL(fileURLWithPath: path).deletingLastPathComponent().path }
            return journalKeyFile.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path }
        }

        /// ``url`` with any password replaced by `redacted`: safe to log.
        package var redactedURL: String {
            guard var components = URLComponents(string: url), components.password != nil else { return url }
            components.password = "redacted"
            return components.string ?? "redacted"
        }

        package var description: String {
            "Store(url: \(redactedURL), directory: \(directory), journalKeyFile: \(journalKeyFile ?? "unset"), "
                + "requestTimeoutMs: \(requestTimeoutMs), unsavedLimit: \(unsavedLimit), "
                + "connectTimeoutSeconds: \(connectTimeoutSeconds))"
        }

        package var debugDescription: String { description }

        package var customMirror: Mirror {
            Mirror(
                self,
                children: [
                    "url": redactedURL, "directory": directory, "journalKeyFile": journalKeyFile as Any,
                    "requestTimeoutMs": requestTimeoutMs, "unsavedLimit": unsavedLimit,
                    "connectTimeoutSeconds": connectTimeoutSeconds,
                ],
                displayStyle: .struct
            )
        }
    }
}

extension RelayConfiguration.Store {
    /// The store a URL names.
    package enum Location: Sendable, Equatable {
        /// A SQLite database file at an absolute path.
        case sqlite(path: String)
        /// A SQLite database in memory (`sqlite://:memory:`), gone when the process ends; for tests and demos.
        case sqliteInMemory
        /// A PostgreSQL database; the URL as written (it may hold a password, so never log it).
        case postgres(url: String)

        static let sqliteScheme = "sqlite://"
        static let postgresSchemes = ["postgres://", "postgresql://"]

        /// Parses a store URL.
        ///
        /// - Throws: ``ConfigurationSyntaxError`` naming the expected form; the message never quotes the URL, which
        ///   may hold a password.
        init(url: String, directory: String) throws(ConfigurationSyntaxError) {
            let lowercased = url.lowercased()
            if lowercased.hasPrefix(Self.sqliteScheme) {
                let path = String(url.dropFirst(Self.sqliteScheme.count))
                guard !path.isEmpty else {
                    throw ConfigurationSyntaxError(
                        "a sqlite URL needs a path: \"sqlite://pushrelay.db\" (relative to the configuration file's "
                            + "folder) or \"sqlite:///var/lib/pushrelay/pushrelay.db\""
                    )
                }
                self =
                    path == ":memory:"
                    ? .sqliteInMemory : .sqlite(path: ConfigurationPath.resolve(path, against: directory))
                return
            }
            if Self.postgresSchemes.contains(where: { lowercased.hasPrefix($0) }) {
                guard let host = ConfigurationSyntax.urlHost(url), !host.isEmpty else {
                    throw ConfigurationSyntaxError("expected a URL like \"postgres://user@host:5432/database\"")
                }
                self = .postgres(url: url)
                return
            }
            if let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") {
                let scheme = url[..<colon]
                if scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) {
                    throw ConfigurationSyntaxError(
                        "unsupported scheme \"\(scheme)\"; expected sqlite://<path> or "
                            + "postgres://user@host:port/database"
                    )
                }
            }
            throw ConfigurationSyntaxError("expected sqlite://<path> or postgres://user@host:port/database")
        }
    }
}
