package import Hummingbird
import Logging

/// The request context of every relay route.
package struct RelayRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage

    package init(source: Source) {
        self.coreContext = .init(source: source)
    }

    /// Bodies are read with the relay's own limit and error (413 PAYLOAD_TOO_LARGE).
    package var maxUploadSize: Int { 1 << 20 }
}
