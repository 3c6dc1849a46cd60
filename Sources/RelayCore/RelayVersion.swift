/// The version PushRelay reports (`pushrelay --version`, the `/healthz` body, the audit log).
package enum RelayVersion {
    package static let current = "0.1.0"
}
