/// The RelaySimulator module. Its contents arrive with the issue that builds it (see Docs/architecture.md).
package enum RelaySimulatorModule {
    package static let name = "RelaySimulator"
}
