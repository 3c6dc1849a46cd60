/// The RelayStorePostgres module. Its contents arrive with the issue that builds it (see Docs/architecture.md).
package enum RelayStorePostgresModule {
    package static let name = "RelayStorePostgres"
}
