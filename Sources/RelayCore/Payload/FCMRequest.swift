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
        let isAlert = push.pushType != .background

        var notification: [String: JSONValue] = [:]
        if isAlert {
            if let title = message.title { notification["title"] = .string(title) }
            if let body = message.body { notification["body"] = .string(body) }
            if let image = message.image { notification["image"] = .string(image) }
        }
        if !notification.isEmpty { fcm["notification"] = .object(notification) }

        if let data = message.data, !data.isEmpty {
            fcm["data"] = .object(
                data.mapValues { value in
                    // FCM: data values are strings; anything else travels as its JSON text.
                    if case .string = value { value } else { .string(value.encodedString()) }
                })
        }

        var android: [String: JSONValue] = [
            "priority": .string(push.isCritical || message.priority == .high ? "HIGH" : "NORMAL")
        ]
        if let ttl = Self.ttlSeconds(message, now: now) { android["ttl"] = .string("\(ttl)s") }
        if let collapseId = message.collapseId { android["collapse_key"] = .string(collapseId) }
        if isAlert {
            var androidNotification: [String: JSONValue] = [:]
            let channel =
                push.isCritical ? push.criticalChannel ?? settings.androidCriticalChannelId : message.channelId
            if let channel { androidNotification["channel_id"] = .string(channel) }
            if let sound = Self.sound(push) { androidNotification["sound"] = .string(sound) }
            if let icon = message.icon { androidNotification["icon"] = .string(icon) }
            // A later push with the same collapse id replaces the shown notification, as apns-collapse-id does.
            if let collapseId = message.collapseId { androidNotification["tag"] = .string(collapseId) }
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
        let apnsPayload = JSONValue.object(["aps": .object(APNsPayload.aps(push))])
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

    /// `android.notification.sound`: the name for critical alerts (`"default"` unless given); otherwise as given,
    /// `"default"` when absent on an alert, nothing when `null`.
    private static func sound(_ push: ResolvedPush) -> String? {
        switch push.message.sound {
        case .silent: push.isCritical ? "default" : nil
        case .unspecified: push.pushType == .alert || push.isCritical ? "default" : nil
        case .named(let name): name
        case .dictionary(_, let name, _): name ?? "default"
        }
    }
}
