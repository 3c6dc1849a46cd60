/// `android.notification.visibility`: what the lock screen shows (FCM's `Visibility`).
package enum AndroidVisibility: String, Sendable, CaseIterable, Codable {
    case `private`
    case `public`
    case secret

    /// FCM's spelling.
    package var fcmValue: String { rawValue.uppercased() }
}

/// `android.notification.notification_priority`: how prominently Android shows a notification (display priority,
/// unlike `android.priority`, which is about delivery).
package enum AndroidNotificationPriority: String, Sendable, CaseIterable, Codable {
    case min
    case low
    case `default`
    case high
    case max

    /// FCM's spelling: `PRIORITY_MIN` … `PRIORITY_MAX`.
    package var fcmValue: String { "PRIORITY_" + rawValue.uppercased() }
}
