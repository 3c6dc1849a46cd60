internal import Foundation
package import RelayCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension RelayConfiguration {
    /// `[audit]`: whether and where this instance writes the audit log, who signs it, and how long it is kept.
    ///
    /// Every instance writes its own hash chain, named by ``instance``; the command-line tools of that instance write
    /// theirs, ``cliChain``. See Docs/auditors.md.
    package struct Audit: Sendable, Equatable {
        /// `enabled`: whether audit records are written at all.
        package var enabled: Bool
        /// `instance`: this instance's chain id; the host name unless set; `"auto"` resolved
        /// (``derivedInstance(stateFolder:)``).
        package var instance: String
        /// With `instance = "auto"`: the file that keeps the id's suffix, or `nil` when the suffix is new for each
        /// start (no folder to keep it in).
        package var instanceSuffixFile: String?
        /// `signing_key_file`: where the checkpoint signing key was read from, resolved.
        package var signingKeyFile: String?
        /// The contents of `signing_key_file`: the base64 Ed25519 private key, already checked to be one.
        package var signingKey: Secret?
        /// `checkpoint_interval_seconds`: how often the head of the chain is signed while records arrive.
        package var checkpointIntervalSeconds: Int
        /// `retention_days`: days an audit log entry is kept.
        package var retentionDays: Int

        package init(
            enabled: Bool = true,
            instance: String = Audit.defaultInstance,
            signingKeyFile: String? = nil,
            signingKey: Secret? = nil,
            checkpointIntervalSeconds: Int = 60,
            retentionDays: Int = 365
        ) {
            self.enabled = enabled
            self.instance = instance
            self.signingKeyFile = signingKeyFile
            self.signingKey = signingKey
            self.checkpointIntervalSeconds = checkpointIntervalSeconds
            self.retentionDays = retentionDays
            self.instanceSuffixFile = nil
        }

        /// The chain the command-line tools of this instance write their admin records to: `<instance>:cli`.
        ///
        /// Not the relay's own chain: a running relay keeps its chain's head in memory, so a second writer there
        /// would break its next commit.
        package var cliChain: String { instance + Self.cliSuffix }

        static let cliSuffix = ":cli"

        /// The `instance` value that asks for an id made from the host name and a suffix (the container image's).
        package static let autoInstance = "auto"

        /// The id `instance = "auto"` stands for: the host name, `-`, and 8 hexadecimal digits kept in
        /// `<stateFolder>/instance-id` (made at the first start), so that the id stays the same across restarts on the
        /// same data while two hosts, or two containers of one image, never share one. Without a folder that can keep
        /// the file, the suffix is new for each start: each start then writes a new chain, which verifies as any other.
        ///
        /// - Returns: The id, and the file that keeps its suffix (`nil` when it could not be kept).
        package static func derivedInstance(stateFolder: String?) -> (instance: String, suffixFile: String?) {
            let host = String(defaultInstance.prefix(maximumInstanceLength - 9))
            guard let stateFolder else { return (host + "-" + randomSuffix(), nil) }
            let file = URL(fileURLWithPath: stateFolder).appendingPathComponent("instance-id").path
            if let kept = try? String(contentsOfFile: file, encoding: .utf8).trimmingCharacters(
                in: .whitespacesAndNewlines),
                kept.count == 8, kept.allSatisfy(\.isHexDigit)
            {
                return (host + "-" + kept.lowercased(), file)
            }
            let suffix = randomSuffix()
            guard FileManager.default.createFile(atPath: file, contents: Data((suffix + "\n").utf8)) else {
                return (host + "-" + suffix, nil)
            }
            return (host + "-" + suffix, file)
        }

        private static func randomSuffix() -> String {
            String(UInt32.random(in: 0...UInt32.max), radix: 16).leftPadded(to: 8)
        }

        /// The signing key, or `nil` when none is configured.
        package var auditSigningKey: AuditSigningKey? {
            // The configuration reader accepted the key, so reading it again cannot fail.
            signingKey.flatMap { try? AuditSigningKey(base64: $0.value) }
        }

        /// What the relay's commit queue needs: the chain, the key and the checkpoint interval.
        package var logSettings: AuditLogSettings {
            AuditLogSettings(
                enabled: enabled,
                chain: instance,
                signingKey: auditSigningKey,
                checkpointInterval: .seconds(checkpointIntervalSeconds)
            )
        }

        /// How long records are kept, in seconds.
        package var retention: Double { Double(retentionDays) * 86_400 }

        /// The longest chain id accepted.
        static let maximumInstanceLength = 100

        /// Why `text` cannot be a chain id, or `nil` when it can.
        static func instanceProblem(_ text: String) -> String? {
            guard text.count <= maximumInstanceLength else {
                return "must be at most \(maximumInstanceLength) characters, found \(text.count)"
            }
            guard text.unicodeScalars.allSatisfy(isInstanceCharacter) else {
                return "must hold only letters, digits, '.', '-', '_' and ':', found \"\(text)\""
            }
            guard !text.hasSuffix(cliSuffix) else {
                return "must not end in \"\(cliSuffix)\": <instance>\(cliSuffix) is the chain of its command-line tools"
            }
            return nil
        }

        private static func isInstanceCharacter(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "-", "_", ":": true
            default: false
            }
        }

        /// The host name as the system gives it; empty if it gives none.
        package static var hostName: String {
            var buffer = [CChar](repeating: 0, count: 256)
            guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// The host name, with any character a chain id may not hold replaced by `-`; `relay` if it has none.
        package static var defaultInstance: String {
            let name = hostName
            let cleaned = String(
                String.UnicodeScalarView(name.unicodeScalars.map { isInstanceCharacter($0) ? $0 : "-" })
            ).prefix(maximumInstanceLength)
            guard !cleaned.isEmpty, instanceProblem(String(cleaned)) == nil else { return "relay" }
            return String(cleaned)
        }
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
