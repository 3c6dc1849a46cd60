/// The RelayStore module. Its contents arrive with the issue that builds it (see Docs/architecture.md).
package enum RelayStoreModule {
    package static let name = "RelayStore"
}
