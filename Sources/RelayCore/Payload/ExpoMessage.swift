/// One Expo push message (an element of the array posted to `/--/api/v2/push/send`).
package struct ExpoMessage: Sendable, Equatable {
    /// The message as JSON, `to` included.
    package var json: [String: JSONValue]

    /// Expo: the final provider payload is at most 4096 bytes.
    package static let payloadLimit = 4096

    /// Builds the Expo message for one push.
    ///
    /// Expo has no field for `threadId`, `pushType` or `apnsEnvironment`; they do not travel to Expo.
    ///
    /// - Throws: ``MessageTooBig`` when the message, without `to`, exceeds 4096 bytes.
    package init(push: ResolvedPush, settings: PayloadSettings) throws(MessageTooBig) {
        let message = push.message
        var json: [String: JSONValue] = [:]
        if let title = message.title { json["title"] = .string(title) }
        if let subtitle = message.subtitle { json["subtitle"] = .string(subtitle) }
        if let body = message.body { json["body"] = .string(body) }
        if let data = message.data { json["data"] = .object(data) }
        if let badge = message.badge { json["badge"] = .int(Int64(badge)) }
        if let ttl = message.ttl { json["ttl"] = .int(Int64(ttl)) }
        if let expiration = message.expiration { json["expiration"] = .int(expiration) }
        if let collapseId = message.collapseId { json["collapseId"] = .string(collapseId) }
        if let categoryId = message.categoryId { json["categoryId"] = .string(categoryId) }
        if let mutableContent = message.mutableContent { json["mutableContent"] = .bool(mutableContent) }
        if let contentAvailable = message.contentAvailable { json["_contentAvailable"] = .bool(contentAvailable) }
        // A push with nothing to show, badge or sound is a background update on iOS.
        if push.pushType == .background { json["_contentAvailable"] = .bool(true) }
        if let image = message.image { json["richContent"] = .object(["image": .string(image)]) }
        if let icon = message.icon { json["icon"] = .string(icon) }

        if push.isCritical {
            json["interruptionLevel"] = .string(InterruptionLevel.critical.rawValue)
            json["sound"] = .object([
                "critical": .bool(true),
                "name": .string(message.sound.name ?? "default"),
                "volume": .double(message.sound.volume ?? APNsPayload.defaultCriticalVolume),
            ])
            json["priority"] = .string(PushPriority.high.rawValue)
            json["channelId"] = .string(push.criticalChannel ?? settings.androidCriticalChannelId)
        } else {
            if let level = message.interruptionLevel { json["interruptionLevel"] = .string(level.rawValue) }
            if let sound = Self.sound(push) { json["sound"] = sound }
            // Expo has no priority below `default`.
            if let priority = message.priority {
                json["priority"] = .string(priority == .low ? "default" : priority.rawValue)
            }
            if let channelId = message.channelId { json["channelId"] = .string(channelId) }
        }

        let size = JSONValue.object(json).encodedBytes().count
        if size > Self.payloadLimit {
            throw MessageTooBig(provider: .expo, size: size, limit: Self.payloadLimit)
        }
        json["to"] = .string(push.token)
        self.json = json
    }

    /// `sound` for a push that is not critical: as given (`null` stays `null`), `"default"` when absent on an alert
    /// that shows something; absent on one that shows nothing.
    private static func sound(_ push: ResolvedPush) -> JSONValue? {
        switch push.message.sound {
        case .unspecified: push.pushType == .alert && push.message.isVisible ? .string("default") : nil
        case .silent: .null
        case .named(let name): .string(name)
        case .dictionary(let critical, let name, let volume):
            .object(
                [
                    "critical": critical.map(JSONValue.bool), "name": name.map(JSONValue.string),
                    "volume": volume.map(JSONValue.double),
                ].compactMapValues { $0 }
            )
        }
    }
}
