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
        return .object(fields)
    }
}
