/// The RelayProviders module. Its contents arrive with the issue that builds it (see Docs/architecture.md).
package enum RelayProvidersModule {
    package static let name = "RelayProviders"
}
