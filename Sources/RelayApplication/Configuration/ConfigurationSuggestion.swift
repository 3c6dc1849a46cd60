import RelayCore

/// "Did you mean …" for configuration keys and environment variables that are almost right.
enum ConfigurationSuggestion {
    /// The candidate closest to `name`, if it is close enough to be a typo: at most one edit per three characters
    /// (at least one), case ignored.
    static func closest(to name: String, among candidates: some Sequence<String>) -> String? {
        NameSuggestion.closest(to: name, among: candidates)
    }
}
