/// The names of the apps one relay sends for: `[apps.<name>]` in the configuration, `"app"` in a message, a tenant's
/// `apps` and `defaultApp`.
///
/// A name is 1 to 32 characters of `a-z`, `0-9` and `-`. The top-level `[apns]`, `[fcm]` and `[expo]` sections are
/// the app named ``default``. Apps come only from the configuration, so a metric label holding one stays bounded.
package enum AppName {
    /// The app of the top-level provider sections, and every tenant's app unless an operator says otherwise.
    package static let `default` = "default"

    /// The longest name.
    package static let maxLength = 32

    /// What a name may be, for messages: `[a-z0-9-]{1,32}`.
    package static let rule = "1 to \(maxLength) characters of a-z, 0-9 and -"

    /// Whether `name` is a well-formed app name (configured or not).
    package static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= maxLength
            && name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
    }
}
