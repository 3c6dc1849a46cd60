/// The upstream push services PushRelay delivers through.
package enum Provider: String, Sendable, CaseIterable, Codable {
    case apns
    case fcm
    case expo
}

/// The APNs environment a device token belongs to.
package enum APNsEnvironment: String, Sendable, CaseIterable, Codable {
    case production
    case sandbox
}

/// The delivery priority a caller asks for, in Expo's vocabulary (which the native API shares), and `low`.
package enum PushPriority: String, Sendable, CaseIterable, Codable {
    case `default`
    case normal
    case high
    /// APNs priority 1: the device's power first, never woken for it; FCM `NORMAL`; Expo `default` (Expo has no
    /// lower one). The relay's own rule: not for critical alerts (they stay at 10) nor Live Activities (5 or 10).
    case low
}

/// iOS interruption levels (`aps.interruption-level`).
package enum InterruptionLevel: String, Sendable, CaseIterable, Codable {
    case passive
    case active
    case timeSensitive = "time-sensitive"
    case critical

    /// Reads a level as callers spell it: APNs's `time-sensitive`, or `timeSensitive` (ActivityKit's and
    /// UserNotifications' case name, which Critical Moments sends); it is always written `time-sensitive`.
    package init?(spelling: String) {
        if spelling == "timeSensitive" {
            self = .timeSensitive
        } else {
            self.init(rawValue: spelling)
        }
    }
}

/// The `apns-push-type` values, each with the suffix its `apns-topic` needs.
///
/// Apple: the topic is the bundle id plus a suffix that depends on the push type ("Sending notification requests to
/// APNs"). `mdm` is not offered: it needs certificate authentication, which PushRelay does not use.
package enum APNsPushType: String, Sendable, CaseIterable, Codable {
    case alert
    case background
    case location
    case voip
    case complication
    case fileprovider
    case liveactivity
    case pushtotalk
    case widgets
    case controls

    /// What is appended to the bundle id to make `apns-topic`.
    package var topicSuffix: String {
        switch self {
        case .alert, .background: ""
        case .location: ".location-query"
        case .voip: ".voip"
        case .complication: ".complication"
        case .fileprovider: ".pushkit.fileprovider"
        case .liveactivity: ".push-type.liveactivity"
        case .pushtotalk: ".voip-ptt"
        case .widgets: ".push-type.widgets"
        case .controls: ".push-type.controls"
        }
    }

    /// The largest payload APNs accepts for this push type, in bytes.
    package var payloadLimit: Int {
        self == .voip ? 5120 : 4096
    }
}
