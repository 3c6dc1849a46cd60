import Foundation
import Logging
package import NIOSSL
import Synchronization

/// The listener's TLS context, replaceable while the relay runs: `SIGHUP` reloads the certificate chain and key from
/// their files (a renewed certificate), and every connection accepted after that uses the new pair; connections
/// already open keep theirs. Other settings still need a restart.
package final class TLSCertificates: Sendable {
    private let context: Mutex<NIOSSLContext>
    /// The files, read again by ``reload()``; `nil` for a pair given as text (tests).
    private let files: (certificateChain: String, privateKey: String)?

    /// A context from PEM text.
    package init(
        certificateChain: String, privateKey: String, files: (certificateChain: String, privateKey: String)? = nil
    )
        throws
    {
        context = Mutex(try Self.makeContext(certificateChain: certificateChain, privateKey: privateKey))
        self.files = files
    }

    /// The context for a new connection.
    package var current: NIOSSLContext { context.withLock { $0 } }

    /// Reads the files again and, if they make a valid pair, uses them for new connections; otherwise keeps the old
    /// pair and throws (the relay keeps serving with it).
    package func reload() throws {
        guard let files else { return }
        let chain = try String(contentsOfFile: files.certificateChain, encoding: .utf8)
        let key = try String(contentsOfFile: files.privateKey, encoding: .utf8)
        try replace(certificateChain: chain, privateKey: key)
    }

    /// Uses a new pair for new connections; a pair that does not load leaves the old one in place.
    package func replace(certificateChain: String, privateKey: String) throws {
        let fresh = try Self.makeContext(certificateChain: certificateChain, privateKey: privateKey)
        context.withLock { $0 = fresh }
    }

    private static func makeContext(certificateChain: String, privateKey: String) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChain.utf8)).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let key = try NIOSSLPrivateKey(bytes: Array(privateKey.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain, privateKey: .privateKey(key))
        configuration.applicationProtocols = ["h2", "http/1.1"]
        return try NIOSSLContext(configuration: configuration)
    }
}
