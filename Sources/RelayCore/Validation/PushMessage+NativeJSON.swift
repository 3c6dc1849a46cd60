extension PushMessage {
    /// The message as the native API writes it: the inverse of ``parse(_:at:issues:)``, field for field, so that
    /// parsing it again gives this message back (the delivery journal keeps a notification this way and reads it back
    /// through the parser, with every rule checked again).
    ///
    /// Absent fields stay absent; `sound` keeps the difference between absent (`unspecified`) and `null` (`silent`).
    package var nativeJSON: JSONValue {
        var fields: [String: JSONValue] = ["to": .array(to.map(JSONValue.string))]
        func set(_ name: String, _ value: JSONValue?) {
            if let value { fields[name] = value }
        }
        set("provider", provider.map { .string($0.rawValue) })
        set("title", title.map(JSONValue.string))
        set("subtitle", subtitle.map(JSONValue.string))
        set("body", body.map(JSONValue.string))
        set("data", data.map(JSONValue.object))
        switch sound {
        case .unspecified: break
        case .silent: fields["sound"] = .null
        case .named(let name): fields["sound"] = .string(name)
        case .dictionary(let critical, let name, let volume):
            var parts: [String: JSONValue] = [:]
            if let critical { parts["critical"] = .bool(critical) }
            if let name { parts["name"] = .string(name) }
            if let volume { parts["volume"] = .double(volume) }
            fields["sound"] = .object(parts)
        }
        set("badge", badge.map { .int(Int64($0)) })
        set("priority", priority.map { .string($0.rawValue) })
        set("ttl", ttl.map { .int(Int64($0)) })
        set("expiration", expiration.map(JSONValue.int))
        set("collapseId", collapseId.map(JSONValue.string))
        set("threadId", threadId.map(JSONValue.string))
        set("categoryId", categoryId.map(JSONValue.string))
        set("channelId", channelId.map(JSONValue.string))
        set("mutableContent", mutableContent.map(JSONValue.bool))
        set("contentAvailable", contentAvailable.map(JSONValue.bool))
        set("interruptionLevel", interruptionLevel.map { .string($0.rawValue) })
        set("isCriticalAlert", isCriticalAlert.map(JSONValue.bool))
        set("image", image.map(JSONValue.string))
        set("icon", icon.map(JSONValue.string))
        set("pushType", pushType.map { .string($0.rawValue) })
        set("apnsEnvironment", apnsEnvironment.map { .string($0.rawValue) })
        set("app", app.map(JSONValue.string))
        set("liveActivity", liveActivity.map(\.nativeJSON))
        set("relevanceScore", relevanceScore.map(JSONValue.double))
        set("titleLocKey", titleLocKey.map(JSONValue.string))
        set("titleLocArgs", titleLocArgs.map(Self.strings))
        set("subtitleLocKey", subtitleLocKey.map(JSONValue.string))
        set("subtitleLocArgs", subtitleLocArgs.map(Self.strings))
        set("bodyLocKey", bodyLocKey.map(JSONValue.string))
        set("bodyLocArgs", bodyLocArgs.map(Self.strings))
        set("launchImage", launchImage.map(JSONValue.string))
        set("targetContentId", targetContentId.map(JSONValue.string))
        set("filterCriteria", filterCriteria.map(JSONValue.string))
        set("clickAction", clickAction.map(JSONValue.string))
        set("notificationCount", notificationCount.map { .int(Int64($0)) })
        set("visibility", visibility.map { .string($0.rawValue) })
        set("color", color.map(JSONValue.string))
        set("notificationPriority", notificationPriority.map { .string($0.rawValue) })
        set("directBootOk", directBootOk.map(JSONValue.bool))
        return .object(fields)
    }

    private static func strings(_ values: [String]) -> JSONValue {
        .array(values.map(JSONValue.string))
    }
}

extension LiveActivity {
    /// The `liveActivity` object as the native API writes it, read back by the parser.
    package var nativeJSON: JSONValue {
        var fields: [String: JSONValue] = ["event": .string(event.rawValue)]
        func set(_ name: String, _ value: JSONValue?) {
            if let value { fields[name] = value }
        }
        set("contentState", contentState.map(JSONValue.object))
        set("timestamp", timestamp.map(JSONValue.int))
        set("staleDate", staleDate.map(JSONValue.int))
        set("dismissalDate", dismissalDate.map(JSONValue.int))
        set("relevanceScore", relevanceScore.map(JSONValue.double))
        set("attributesType", attributesType.map(JSONValue.string))
        set("attributes", attributes.map(JSONValue.object))
        set("inputPushToken", inputPushToken.map(JSONValue.bool))
        set("inputPushChannel", inputPushChannel.map(JSONValue.string))
        return .object(fields)
    }
}
