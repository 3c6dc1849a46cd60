package import Foundation

/// A request for FCM HTTP v1: `POST /v1/projects/<project>/messages:send` with `{"message": {…}}`.
package struct FCMRequest: Sendable, Equatable {
    package var path: String
    package var body: [UInt8]

    /// FCM: `android.ttl` is at most 4 weeks (2,419,200 s), which is also its default.
    package static let maxTTLSeconds = 2_419_200
    /// FCM: a message's notification and data together are at most 4096 bytes.
    package static let payloadLimit = 4096

    /// Builds the FCM request for one push.
    ///
    /// The `apns` block is always included: an FCM token may belong to an iOS app, and without the block a critical
    /// alert would reach iOS as an ordinary notification. Android ignores it.
    ///
    /// - Throws: ``MessageTooBig`` when notification and data exceed 4096 bytes, or the `apns` payload exceeds
    ///   APNs's limit.
    package init(push: ResolvedPush, settings: PayloadSettings, now: Date) throws(MessageTooBig) {
        let message = push.message
        self.path = "/v1/projects/\(settings.fcmProjectId)/messages:send"

        var fcm: [String: JSONValue] = ["token": .string(push.token)]
        // A push that shows nothing is a data message (no `notification`, no `android.notification`), so that the
        // app's handler gets it in the background too; a badge or sound travels in `data` for the app to apply.
        let isVisible = message.isVisible && push.pushType != .background

        var notification: [String: JSONValue] = [:]
        if isVisible {
            if let title = message.title { notification["title"] = .string(title) }
            if let body = message.body { notification["body"] = .string(body) }
            if let image = message.image { notification["image"] = .string(image) }
        }
        if !notification.isEmpty { fcm["notification"] = .object(notification) }

        var data = (message.data ?? [:]).mapValues { value in
            // FCM: data values are strings; anything else travels as its JSON text.
            if case .string = value { value } else { JSONValue.string(value.encodedString()) }
        }
        if !isVisible {
            if let badge = message.badge { data["badge"] = .string(String(badge)) }
            if let sound = message.sound.name { data["sound"] = .string(sound) }
        }
        if !data.isEmpty { fcm["data"] = .object(data) }

        var android: [String: JSONValue] = [
            "priority": .string(push.isCritical || message.priority == .high ? "HIGH" : "NORMAL")
        ]
        if let ttl = Self.ttlSeconds(message, now: now) { android["ttl"] = .string("\(ttl)s") }
        if let collapseId = message.collapseId { android["collapse_key"] = .string(collapseId) }
        if let directBootOk = message.directBootOk { android["direct_boot_ok"] = .bool(directBootOk) }
        if isVisible {
            let androidNotification = Self.androidNotification(push, settings: settings)
            if !androidNotification.isEmpty { android["notification"] = .object(androidNotification) }
        }
        fcm["android"] = .object(android)

        var apnsHeaders: [String: JSONValue] = [
            "apns-priority": .string(String(APNsPayload.priority(push))),
            "apns-push-type": .string(push.pushType.rawValue),
        ]
        if let expiration = APNsPayload.expiration(message, now: now) {
            apnsHeaders["apns-expiration"] = .string(expiration)
        }
        if let collapseId = message.collapseId { apnsHeaders["apns-collapse-id"] = .string(collapseId) }
        let apnsPayload = JSONValue.object(["aps": .object(APNsPayload.aps(push, now: now))])
        fcm["apns"] = .object(["headers": .object(apnsHeaders), "payload": apnsPayload])

        let visibleSize = (fcm["notification"]?.encodedBytes().count ?? 0) + (fcm["data"]?.encodedBytes().count ?? 0)
        if visibleSize > Self.payloadLimit {
            throw MessageTooBig(provider: .fcm, size: visibleSize, limit: Self.payloadLimit)
        }
        let apnsSize = apnsPayload.encodedBytes().count
        if apnsSize > push.pushType.payloadLimit {
            throw MessageTooBig(provider: .fcm, size: apnsSize, limit: push.pushType.payloadLimit)
        }
        self.body = JSONValue.object(["message": .object(fcm)]).encodedBytes()
    }

    /// `android.ttl` in seconds: `ttl`, else the time left until `expiration`, within FCM's 0 to 4 weeks.
    static func ttlSeconds(_ message: PushMessage, now: Date) -> Int? {
        let seconds: Int64
        if let ttl = message.ttl {
            seconds = Int64(ttl)
        } else if let expiration = message.expiration {
            seconds = expiration - Int64(now.timeIntervalSince1970)
        } else {
            return nil
        }
        return Int(min(max(seconds, 0), Int64(maxTTLSeconds)))
    }

    /// `android.notification` of a push that shows something.
    private static func androidNotification(_ push: ResolvedPush, settings: PayloadSettings) -> [String: JSONValue] {
        let message = push.message
        var fields: [String: JSONValue] = [:]
        func set(_ key: String, _ value: String?) {
            if let value { fields[key] = .string(value) }
        }
        func set(_ key: String, _ values: [String]?) {
            if let values { fields[key] = .array(values.map(JSONValue.string)) }
        }
        set(
            "channel_id",
            push.isCritical ? push.criticalChannel ?? settings.androidCriticalChannelId : message.channelId)
        set("sound", sound(push))
        set("icon", message.icon)
        // A later push with the same collapse id replaces the shown notification, as apns-collapse-id does.
        set("tag", message.collapseId)
        set("title_loc_key", message.titleLocKey)
        set("title_loc_args", message.titleLocArgs)
        set("body_loc_key", message.bodyLocKey)
        set("body_loc_args", message.bodyLocArgs)
        set("click_action", message.clickAction)
        if let count = message.notificationCount { fields["notification_count"] = .int(Int64(count)) }
        set("visibility", message.visibility?.fcmValue)
        set("color", message.color)
        set("notification_priority", message.notificationPriority?.fcmValue)
        return fields
    }

    /// `android.notification.sound` of a visible push: the name for critical alerts (`"default"` unless given);
    /// otherwise as given, `"default"` when absent, nothing when `null`.
    private static func sound(_ push: ResolvedPush) -> String? {
        switch push.message.sound {
        case .silent: push.isCritical ? "default" : nil
        case .unspecified: "default"
        case .named(let name): name
        case .dictionary(_, let name, _): name ?? "default"
        }
    }
}
