package import RelayCore

/// Where and as whom PushRelay sends to APNs.
package struct APNsSenderConfiguration: Sendable {
    package var payload: PayloadSettings
    package var productionEndpoint: String
    package var sandboxEndpoint: String

    package static let productionEndpoint = "https://api.push.apple.com"
    package static let sandboxEndpoint = "https://api.sandbox.push.apple.com"

    package init(
        payload: PayloadSettings,
        productionEndpoint: String = APNsSenderConfiguration.productionEndpoint,
        sandboxEndpoint: String = APNsSenderConfiguration.sandboxEndpoint
    ) {
        self.payload = payload
        self.productionEndpoint = productionEndpoint
        self.sandboxEndpoint = sandboxEndpoint
    }
}
