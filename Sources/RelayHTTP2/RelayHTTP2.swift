/// The RelayHTTP2 module. Its contents arrive with the issue that builds it (see Docs/architecture.md).
package enum RelayHTTP2Module {
    package static let name = "RelayHTTP2"
}
