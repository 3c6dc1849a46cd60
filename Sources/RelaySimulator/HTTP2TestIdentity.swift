internal import Crypto
internal import Foundation
// SwiftASN1 comes with swift-certificates; X509's PEM serialisation and IP-address SANs are spelled in its types.
internal import SwiftASN1
internal import X509

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The certificate authority of an ``HTTP2TestServer``: a self-signed P-256 CA certificate and its private key.
///
/// A server issues a fresh leaf certificate from its identity at every start, so two servers started with the same
/// identity (one after the other on the same port, for example) are trusted by the same CA file. Take a running
/// server's identity from ``HTTP2TestServer/identity``, or let ``HTTP2TestServer/start(configuration:handler:)`` load
/// it from a certificate directory that already holds `ca.pem` and `ca-key.pem`.
package struct HTTP2TestIdentity: Sendable {
    /// The CA certificate, PEM encoded: what a client passes as its trust root (`CURLOPT_CAINFO`).
    package let certificatePEM: String
    /// The CA private key, PEM encoded (PKCS #8).
    package let privateKeyPEM: String

    /// The file name of the CA certificate inside a certificate directory.
    package static let certificateFileName = "ca.pem"
    /// The file name of the CA private key inside a certificate directory.
    package static let privateKeyFileName = "ca-key.pem"

    private let certificate: Certificate
    private let privateKey: P256.Signing.PrivateKey

    /// Makes a new CA with a random key, valid from an hour ago for ten years.
    package static func generate() throws -> HTTP2TestIdentity {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName {
            OrganizationName("PushRelay")
            CommonName("PushRelay RelaySimulator test CA")
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now - clockSkewAllowance,
            notValidAfter: now + certificateAuthorityLifetime,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        return try HTTP2TestIdentity(certificate: certificate, privateKey: key)
    }

    /// Loads an identity from PEM text.
    ///
    /// - Throws: When either text is not a PEM certificate or a PEM P-256 private key.
    package init(certificatePEM: String, privateKeyPEM: String) throws {
        try self.init(
            certificate: Certificate(pemEncoded: certificatePEM),
            privateKey: P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        )
    }

    private init(certificate: Certificate, privateKey: P256.Signing.PrivateKey) throws {
        self.certificate = certificate
        self.privateKey = privateKey
        self.certificatePEM = try certificate.serializeAsPEM().pemString
        self.privateKeyPEM = privateKey.pemRepresentation
    }

    /// Loads the identity stored in `directory` by ``write(to:)``, or returns `nil` when either file is missing.
    ///
    /// - Throws: When the files exist but cannot be read or parsed.
    package static func load(from directory: String) throws -> HTTP2TestIdentity? {
        let certificatePath = Self.path(directory, Self.certificateFileName)
        let keyPath = Self.path(directory, Self.privateKeyFileName)
        let fileManager = FileManager.default
        guard fileManager.fileExists(atPath: certificatePath), fileManager.fileExists(atPath: keyPath) else {
            return nil
        }
        return try HTTP2TestIdentity(
            certificatePEM: String(contentsOfFile: certificatePath, encoding: .utf8),
            privateKeyPEM: String(contentsOfFile: keyPath, encoding: .utf8)
        )
    }

    /// Writes `ca.pem` and `ca-key.pem` into `directory`, creating it if needed.
    ///
    /// - Returns: The path of the CA certificate file.
    @discardableResult
    package func write(to directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificatePath = Self.path(directory, Self.certificateFileName)
        // Write-then-rename, so a client reading the CA file during a restart never sees half a file.
        try Data(self.certificatePEM.utf8).write(to: URL(fileURLWithPath: certificatePath), options: .atomic)
        try Data(self.privateKeyPEM.utf8).write(
            to: URL(fileURLWithPath: Self.path(directory, Self.privateKeyFileName)),
            options: .atomic
        )
        return certificatePath
    }

    /// Issues a server certificate for `127.0.0.1`, `::1` and `localhost` (plus `host` when it is another name or
    /// address), valid from an hour ago for a year.
    ///
    /// - Returns: The leaf certificate and its new private key, both PEM encoded.
    package func issueServerCertificate(host: String) throws -> (certificatePEM: String, privateKeyPEM: String) {
        let key = P256.Signing.PrivateKey()
        let now = Date()
        var names: [GeneralName] = [
            .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: ipv6Loopback[...])),
            .dnsName("localhost"),
        ]
        if let bytes = Self.ipAddressBytes(host) {
            if bytes != [127, 0, 0, 1], bytes != ipv6Loopback {
                names.append(.ipAddress(ASN1OctetString(contentBytes: bytes[...])))
            }
        } else if host != "localhost" {
            names.append(.dnsName(host))
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now - clockSkewAllowance,
            notValidAfter: now + serverCertificateLifetime,
            issuer: self.certificate.subject,
            subject: try DistinguishedName {
                OrganizationName("PushRelay")
                CommonName("localhost")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
                AuthorityKeyIdentifier(
                    keyIdentifier: try self.certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
            },
            issuerPrivateKey: Certificate.PrivateKey(self.privateKey)
        )
        return (try certificate.serializeAsPEM().pemString, key.pemRepresentation)
    }

    /// The network-order bytes of an IPv4 or IPv6 literal, or `nil` when `host` is a name.
    static func ipAddressBytes(_ host: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }

    private static func path(_ directory: String, _ file: String) -> String {
        directory.hasSuffix("/") ? directory + file : directory + "/" + file
    }
}

/// Certificates start an hour in the past, so a client whose clock is slightly behind still accepts them.
private let clockSkewAllowance: TimeInterval = 60 * 60
/// Long enough that a CA kept in a certificate directory outlives any test run.
private let certificateAuthorityLifetime: TimeInterval = 10 * 365 * 24 * 60 * 60
/// Leaf certificates are reissued at every start, so a year is plenty.
private let serverCertificateLifetime: TimeInterval = 365 * 24 * 60 * 60
/// `::1` in network order.
private let ipv6Loopback: [UInt8] = Array(repeating: 0, count: 15) + [1]
