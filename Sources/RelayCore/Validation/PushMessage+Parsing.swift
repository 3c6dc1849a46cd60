extension PushMessage {
    /// The native message's fields, exactly; anything else is rejected by name.
    package static let fieldNames: Set<String> = [
        "to", "provider", "title", "subtitle", "body", "data", "sound", "badge", "priority", "ttl", "expiration",
        "collapseId", "threadId", "categoryId", "channelId", "mutableContent", "contentAvailable",
        "interruptionLevel", "isCriticalAlert", "image", "icon", "pushType", "apnsEnvironment", "app",
        "liveActivity", "relevanceScore", "titleLocKey", "titleLocArgs", "subtitleLocKey", "subtitleLocArgs",
        "bodyLocKey", "bodyLocArgs", "launchImage", "targetContentId", "filterCriteria", "clickAction",
        "notificationCount", "visibility", "color", "notificationPriority", "directBootOk",
    ]

    /// The `liveActivity` object's fields.
    static let liveActivityFieldNames: Set<String> = [
        "event", "contentState", "timestamp", "staleDate", "dismissalDate", "relevanceScore", "attributesType",
        "attributes", "inputPushToken", "inputPushChannel",
    ]

    static let soundFieldNames: Set<String> = ["critical", "name", "volume"]

    /// Parses and validates one native message.
    ///
    /// Every problem is appended to `issues` with its path below `path`; the result is `nil` when there was any.
    package static func parse(
        _ json: JSONValue,
        at path: JSONPath,
        issues: inout [ValidationIssue]
    ) -> ValidatedMessage? {
        guard case .object(let object) = json else {
            issues.append(ValidationIssue(path, "must be an object, not \(json.typeName)"))
            return nil
        }
        var reader = ObjectReader(object, at: path)
        reader.rejectUnknownKeys(fieldNames)

        var message = PushMessage(to: parseTokens(object["to"], at: path.appending("to"), issues: &reader.issues))
        message.provider = reader.enumeration("provider", Provider.self)
        message.title = reader.string("title")
        message.subtitle = reader.string("subtitle")
        message.body = reader.string("body")
        message.data = reader.object("data")
        message.sound = parseSound(object, at: path, issues: &reader.issues)
        message.badge = reader.integer("badge").map(clampToInt)
        message.priority = reader.enumeration("priority", PushPriority.self)
        message.ttl = reader.integer("ttl").map(clampToInt)
        message.expiration = reader.integer("expiration")
        message.collapseId = reader.string("collapseId")
        message.threadId = reader.string("threadId")
        message.categoryId = reader.string("categoryId")
        message.channelId = reader.string("channelId")
        message.mutableContent = reader.bool("mutableContent")
        message.contentAvailable = reader.bool("contentAvailable")
        if let level = reader.string("interruptionLevel") {
            message.interruptionLevel = InterruptionLevel(spelling: level)
            if message.interruptionLevel == nil {
                reader.issues.append(
                    ValidationIssue(
                        path.appending("interruptionLevel"),
                        "must be one of 'passive', 'active', 'time-sensitive' (or 'timeSensitive'), 'critical'"))
            }
        }
        message.isCriticalAlert = reader.bool("isCriticalAlert")
        message.image = reader.string("image")
        message.icon = reader.string("icon")
        message.pushType = reader.enumeration("pushType", APNsPushType.self)
        message.apnsEnvironment = reader.enumeration("apnsEnvironment", APNsEnvironment.self)
        if let app = reader.string("app") {
            if AppName.isValid(app) {
                message.app = app
            } else {
                reader.issues.append(ValidationIssue(path.appending("app"), "must be an app's name, \(AppName.rule)"))
            }
        }

        message.liveActivity = parseLiveActivity(object, at: path, issues: &reader.issues)
        message.relevanceScore = reader.number("relevanceScore")
        message.titleLocKey = reader.string("titleLocKey")
        message.titleLocArgs = reader.strings("titleLocArgs")
        message.subtitleLocKey = reader.string("subtitleLocKey")
        message.subtitleLocArgs = reader.strings("subtitleLocArgs")
        message.bodyLocKey = reader.string("bodyLocKey")
        message.bodyLocArgs = reader.strings("bodyLocArgs")
        message.launchImage = reader.string("launchImage")
        message.targetContentId = reader.string("targetContentId")
        message.filterCriteria = reader.string("filterCriteria")
        message.clickAction = reader.string("clickAction")
        message.notificationCount = reader.integer("notificationCount").map(clampToInt)
        message.visibility = reader.enumeration("visibility", AndroidVisibility.self)
        message.color = reader.string("color")
        message.notificationPriority = reader.enumeration("notificationPriority", AndroidNotificationPriority.self)
        message.directBootOk = reader.bool("directBootOk")

        let typeIssues = reader.issues
        issues += typeIssues
        // Checking values only makes sense once the types are right; report both kinds only where they differ.
        let validated = message.validated(at: path, issues: &issues, skipping: Set(typeIssues.map(\.path)))
        return typeIssues.isEmpty ? validated : nil
    }

    /// `to`: a token or an array of tokens; the shapes are checked by validation.
    private static func parseTokens(_ json: JSONValue?, at path: JSONPath, issues: inout [ValidationIssue]) -> [String]
    {
        switch json {
        case nil, .null:
            issues.append(ValidationIssue(path, "is required: a device token or an array of 1 to 100 device tokens"))
            return []
        case .string(let token):
            return [token]
        case .array(let elements):
            for (index, element) in elements.enumerated() where element.stringValue == nil {
                issues.append(ValidationIssue(path.appending(index), "must be a string, not \(element.typeName)"))
            }
            // Keep positions and the count right for validation; a wrong element's place holds "" and its path is
            // skipped there, having been reported here.
            return elements.map { $0.stringValue ?? "" }
        case let other?:
            issues.append(ValidationIssue(path, "must be a string or an array of strings, not \(other.typeName)"))
            return []
        }
    }

    /// `sound`: absent, `null` (silent), a name, or `{critical, name, volume}`.
    private static func parseSound(
        _ object: [String: JSONValue],
        at parent: JSONPath,
        issues: inout [ValidationIssue]
    ) -> SoundSetting {
        let path = parent.appending("sound")
        switch object["sound"] {
        case nil: return .unspecified
        case .null: return .silent
        case .string(let name): return .named(name)
        case .object(let fields):
            var reader = ObjectReader(fields, at: path)
            reader.rejectUnknownKeys(soundFieldNames)
            let critical = reader.bool("critical")
            let name = reader.string("name")
            var volume: Double?
            switch fields["volume"] {
            case nil, .null: volume = nil
            case let value? where value.numberValue != nil: volume = value.numberValue
            case let other?: reader.mismatch("volume", expected: "a number from 0 to 1", got: other)
            }
            issues += reader.issues
            return .dictionary(critical: critical, name: name, volume: volume)
        case let other?:
            issues.append(
                ValidationIssue(
                    path, "must be a string, null, or an object {critical, name, volume}, not \(other.typeName)")
            )
            return .unspecified
        }
    }

    /// `liveActivity`: the object's types; its rules (which keys each event takes) are validation's.
    private static func parseLiveActivity(
        _ object: [String: JSONValue],
        at parent: JSONPath,
        issues: inout [ValidationIssue]
    ) -> LiveActivity? {
        let path = parent.appending("liveActivity")
        switch object["liveActivity"] {
        case nil, .null: return nil
        case .object(let fields):
            var reader = ObjectReader(fields, at: path)
            reader.rejectUnknownKeys(liveActivityFieldNames)
            let event = reader.enumeration("event", LiveActivityEvent.self)
            if fields["event"] == nil || fields["event"] == .null {
                reader.issues.append(
                    ValidationIssue(path.appending("event"), "is required: 'start', 'update' or 'end'"))
            }
            var activity = LiveActivity(event: event ?? .update)
            activity.contentState = reader.object("contentState")
            activity.timestamp = reader.integer("timestamp")
            activity.staleDate = reader.integer("staleDate")
            activity.dismissalDate = reader.integer("dismissalDate")
            activity.relevanceScore = reader.number("relevanceScore")
            activity.attributesType = reader.string("attributesType")
            activity.attributes = reader.object("attributes")
            activity.inputPushToken = reader.bool("inputPushToken")
            activity.inputPushChannel = reader.string("inputPushChannel")
            issues += reader.issues
            return event == nil ? nil : activity
        case let other?:
            issues.append(ValidationIssue(path, "must be an object {event, contentState, …}, not \(other.typeName)"))
            return nil
        }
    }

    private static func clampToInt(_ value: Int64) -> Int {
        Int(clamping: value)
    }
}
