extension RelayConfiguration {
    /// A credential read from the configuration: the APNs signing key, the FCM private key or the Expo access token.
    ///
    /// Its description, debug description and mirror are redacted, so printing, logging or dumping a configuration
    /// never shows the credential; read ``value`` where the credential is actually used.
    package struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable
    {
        /// The credential itself.
        package var value: String

        package init(_ value: String) {
            self.value = value
        }

        package var description: String { "<redacted>" }

        package var debugDescription: String { "Secret(<redacted>)" }

        package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
    }
}
