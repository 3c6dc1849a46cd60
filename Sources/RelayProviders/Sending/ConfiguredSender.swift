package import RelayCore

/// A sender that tells the settings it builds messages with: what a tenant may see of an app (`GET /v1/whoami`: its
/// APNs topic and default environment, its FCM project), never a credential or an endpoint.
package protocol ConfiguredSender: PushSender {
    /// The app's payload settings, as every message of this sender is built with them.
    var payloadSettings: PayloadSettings { get }
}

extension ProviderSender: ConfiguredSender {
    package var payloadSettings: PayloadSettings { upstream.payload }
}
