/// What the provider request builders need to know about the operator's set-up.
package struct PayloadSettings: Sendable, Equatable {
    /// The app's bundle id: `apns-topic` before the push type's suffix.
    package var apnsTopic: String
    /// The environment of tokens whose message names none.
    package var apnsDefaultEnvironment: APNsEnvironment
    /// The Android notification channel of critical alerts.
    package var androidCriticalChannelId: String
    /// The Firebase project id in the FCM send path.
    package var fcmProjectId: String

    package static let defaultCriticalChannelId = "oncall_critical"

    package init(
        apnsTopic: String,
        apnsDefaultEnvironment: APNsEnvironment = .production,
        androidCriticalChannelId: String = PayloadSettings.defaultCriticalChannelId,
        fcmProjectId: String = ""
    ) {
        self.apnsTopic = apnsTopic
        self.apnsDefaultEnvironment = apnsDefaultEnvironment
        self.androidCriticalChannelId = androidCriticalChannelId
        self.fcmProjectId = fcmProjectId
    }
}

/// A built payload over its provider's size limit. The delivery code is `MessageTooBig`.
package struct MessageTooBig: Error, Sendable, Equatable, CustomStringConvertible {
    package var provider: Provider
    /// The size of the built payload, in bytes.
    package var size: Int
    /// The provider's limit, in bytes.
    package var limit: Int

    package init(provider: Provider, size: Int, limit: Int) {
        self.provider = provider
        self.size = size
        self.limit = limit
    }

    package var description: String {
        "the \(provider.rawValue) payload is \(size) bytes; the limit is \(limit)"
    }
}

/// An HTTP header of a built request.
package struct HeaderField: Sendable, Equatable {
    package var name: String
    package var value: String

    package init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}
