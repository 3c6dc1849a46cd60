/// Every problem found while loading a configuration, not just the first.
///
/// ```
/// apns.key_file: file /etc/pushrelay/AuthKey.p8 does not exist
/// PUSHRELAY_UPSTREAM_MAX_ATTEMPTS: must be between 1 and 10, found 0
/// ```
///
/// Messages never quote a secret: not the Expo access token, not the contents of any file, not a store URL (which may
/// hold a password).
package struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The problems, in the order found: syntax and unknown names first, then each section in file order.
    package var problems: [Problem]

    package init(problems: [Problem]) {
        self.problems = problems
    }

    /// One problem.
    package struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// What the problem is about: a key path (`apns.key_file`), the environment variable that set the value
        /// (`PUSHRELAY_APNS_KEY_FILE`), an unknown section or key as written, or the configuration file itself.
        package var key: String
        /// What is wrong, in a sentence fragment without a trailing full stop.
        package var message: String

        package init(key: String, message: String) {
            self.key = key
            self.message = message
        }

        /// `key: message`.
        package var description: String { "\(key): \(message)" }
    }

    /// One line per problem, `key: message`.
    package var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}

/// A value's syntax is wrong; the message says what was expected. Becomes a ``ConfigurationError/Problem`` once the
/// key is known.
struct ConfigurationSyntaxError: Error, Sendable, Equatable {
    var message: String

    init(_ message: String) {
        self.message = message
    }
}
