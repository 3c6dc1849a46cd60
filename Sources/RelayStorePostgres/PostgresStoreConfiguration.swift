import Foundation
import NIOSSL
import PostgresNIO
package import RelayStore

/// Where a ``PostgresStore`` connects, parsed from `store.url`.
///
/// The URL is `postgres://user:password@host:port/database?sslmode=MODE&search_path=SCHEMA` (`postgresql://` too);
/// the port defaults to 5432 and the database to the user's name, as with `psql`. `sslmode` follows libpq's names:
/// `disable`; `prefer` (the default) and `require` encrypt without checking the server's certificate; `verify-ca`
/// checks the certificate's chain, `verify-full` its chain and host name, against the system's roots or the file
/// `sslrootcert` names. `search_path` puts the store's tables in that schema, which ``PostgresStore/migrate()``
/// creates if missing (several relays, or tests, can share one database that way).
package struct PostgresStoreConfiguration: Sendable, Equatable {
    /// How the connection is encrypted (libpq's `sslmode`).
    package enum TLSMode: String, Sendable, Equatable, CaseIterable {
        case disable
        case prefer
        case require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    package var host: String
    package var port: Int
    package var username: String
    /// Never logged; ``description`` shows `redacted` instead.
    package var password: String?
    package var database: String
    package var tls: TLSMode
    /// A PEM file of the certificate authorities `verify-ca` and `verify-full` trust instead of the system's.
    package var rootCertificateFile: String?
    /// The schema holding the store's tables; `nil` uses the server's `search_path` (normally `public`).
    package var schema: String?
    /// The most connections the store opens.
    package var maximumConnections: Int

    package static let defaultPort = 5432
    package static let defaultMaximumConnections = 10

    package init(
        host: String,
        port: Int = Self.defaultPort,
        username: String,
        password: String? = nil,
        database: String? = nil,
        tls: TLSMode = .prefer,
        rootCertificateFile: String? = nil,
        schema: String? = nil,
        maximumConnections: Int = Self.defaultMaximumConnections
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database ?? username
        self.tls = tls
        self.rootCertificateFile = rootCertificateFile
        self.schema = schema
        self.maximumConnections = maximumConnections
    }

    /// Parses a store URL.
    ///
    /// - Throws: ``StoreError/unavailable(_:)`` naming what is wrong; the message never quotes the URL, which may
    ///   hold a password.
    package init(url: String) throws(StoreError) {
        let lowercased = url.lowercased()
        guard lowercased.hasPrefix("postgres://") || lowercased.hasPrefix("postgresql://"),
            let components = URLComponents(string: url)
        else {
            throw StoreError.unavailable("expected a URL like postgres://user:password@host:5432/database")
        }
        guard let host = components.host, !host.isEmpty else {
            throw StoreError.unavailable("the PostgreSQL URL names no host")
        }
        // `user` and `password` arrive percent-encoded (a password may hold `@` or `/` that way).
        guard let username = components.user?.removingPercentEncoding, !username.isEmpty else {
            throw StoreError.unavailable("the PostgreSQL URL names no user (postgres://user@host/database)")
        }
        let password = components.password?.removingPercentEncoding
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let database = path.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
        self.init(
            host: host,
            port: components.port ?? Self.defaultPort,
            username: username,
            password: password,
            database: database
        )
        for item in components.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = TLSMode(rawValue: value) else {
                    let modes = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                    throw StoreError.unavailable("sslmode must be one of \(modes)")
                }
                tls = mode
            case "sslrootcert":
                rootCertificateFile = value
            case "search_path":
                guard Self.isPlainIdentifier(value) else {
                    throw StoreError.unavailable(
                        "search_path must be one schema name of lowercase letters, digits and underscores"
                    )
                }
                schema = value
            case "pool_max":
                guard let count = Int(value), (1...1_000).contains(count) else {
                    throw StoreError.unavailable("pool_max must be a number of connections from 1 to 1000")
                }
                maximumConnections = count
            default:
                throw StoreError.unavailable(
                    "unknown PostgreSQL URL parameter \"\(item.name)\"; known: sslmode, sslrootcert, search_path, "
                        + "pool_max"
                )
            }
        }
    }

    /// Whether `name` can stand in SQL as an identifier without quoting: the schema name is the one value that
    /// cannot be a bound parameter (`CREATE SCHEMA`), so it is held to this.
    package static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 63 else { return false }
        let lower: ClosedRange<Unicode.Scalar> = "a"..."z"
        let digits: ClosedRange<Unicode.Scalar> = "0"..."9"
        return (lower.contains(first) || first == "_")
            && name.unicodeScalars.allSatisfy { lower.contains($0) || digits.contains($0) || $0 == "_" }
    }

    /// The TLS settings postgres-nio takes.
    func clientTLS() -> PostgresClient.Configuration.TLS {
        var verified = TLSConfiguration.makeClientConfiguration()
        if let rootCertificateFile { verified.trustRoots = .file(rootCertificateFile) }
        var unverified = TLSConfiguration.makeClientConfiguration()
        unverified.certificateVerification = .none
        switch tls {
        case .disable:
            return .disable
        case .prefer:
            return .prefer(unverified)
        case .require:
            return .require(unverified)
        case .verifyCA:
            verified.certificateVerification = .noHostnameVerification
            return .require(verified)
        case .verifyFull:
            verified.certificateVerification = .fullVerification
            return .require(verified)
        }
    }
}

extension PostgresStoreConfiguration: CustomStringConvertible {
    /// The connection without its password: safe to log.
    package var description: String {
        let credentials = password == nil ? username : "\(username):redacted"
        let schemaPart = schema.map { ", schema \($0)" } ?? ""
        return "postgres://\(credentials)@\(host):\(port)/\(database) (sslmode \(tls.rawValue)\(schemaPart))"
    }
}
