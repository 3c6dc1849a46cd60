/// The RelayServer module. Its contents arrive with the issue that builds it (see Docs/architecture.md).
package enum RelayServerModule {
    package static let name = "RelayServer"
}
