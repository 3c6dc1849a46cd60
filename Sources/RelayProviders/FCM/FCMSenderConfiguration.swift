package import RelayCore

/// Where PushRelay sends to FCM.
package struct FCMSenderConfiguration: Sendable {
    package var payload: PayloadSettings
    package var endpoint: String

    package static let endpoint = "https://fcm.googleapis.com"

    package init(payload: PayloadSettings, endpoint: String = FCMSenderConfiguration.endpoint) {
        self.payload = payload
        self.endpoint = endpoint
    }
}
