package import Foundation

/// A request for APNs's HTTP/2 provider API: `POST /3/device/<token>`.
package struct APNsRequest: Sendable, Equatable {
    package var environment: APNsEnvironment
    package var path: String
    /// `apns-push-type`, `apns-priority`, `apns-topic`, `apns-expiration` and `apns-collapse-id` when they apply, and
    /// `apns-id`; credentials are added by the sender.
    package var headers: [HeaderField]
    /// The JSON payload: `aps` and the custom data beside it.
    package var body: [UInt8]
    /// The lowercase UUID sent as `apns-id`, which APNs echoes, so that every send can be traced.
    package var apnsID: String

    /// Builds the APNs request for one push.
    ///
    /// - Parameters:
    ///   - now: the current time, for `apns-expiration` from `ttl`.
    ///   - apnsID: a fresh UUID for this push; retries reuse it.
    ///   - body: the payload of a request built for another push of the same message, push type and criticality,
    ///     which this one's would repeat byte for byte (the payload holds neither the token nor the id); `nil` builds
    ///     it.
    /// - Throws: ``MessageTooBig`` when the payload exceeds 4096 bytes (5120 for VoIP).
    package init(
        push: ResolvedPush,
        settings: PayloadSettings,
        now: Date,
        apnsID: UUID,
        body: [UInt8]? = nil
    ) throws(MessageTooBig) {
        let message = push.message
        let pushType = push.pushType
        self.environment = message.apnsEnvironment ?? settings.apnsDefaultEnvironment
        self.path = "/3/device/\(push.token)"
        self.apnsID = apnsID.lowercaseString

        var headers = [
            HeaderField("apns-push-type", pushType.rawValue),
            HeaderField("apns-priority", String(APNsPayload.priority(push))),
            HeaderField("apns-topic", settings.apnsTopic + pushType.topicSuffix),
        ]
        if let expiration = APNsPayload.expiration(message, now: now) {
            headers.append(HeaderField("apns-expiration", expiration))
        }
        if let collapseId = message.collapseId {
            headers.append(HeaderField("apns-collapse-id", collapseId))
        }
        headers.append(HeaderField("apns-id", self.apnsID))
        self.headers = headers

        if let body {
            self.body = body
        } else {
            var payload = message.data ?? [:]
            if let image = message.image { payload["image"] = .string(image) }
            payload["aps"] = .object(APNsPayload.aps(push, now: now))
            self.body = JSONValue.object(payload).encodedBytes()
        }
        if self.body.count > pushType.payloadLimit {
            throw MessageTooBig(provider: .apns, size: self.body.count, limit: pushType.payloadLimit)
        }
    }
}

/// The `aps` dictionary and headers, shared by the APNs request and the `apns` block of FCM requests.
package enum APNsPayload {
    /// Apple: a critical alert's `aps.sound` is `{"critical": 1, "name": …, "volume": …}`; full volume by default.
    package static let defaultCriticalVolume = 1.0

    /// `apns-priority`: 5 for background pushes whatever was asked (Apple rejects 10), 10 for critical alerts; else 5
    /// for `normal`, 1 for `low` (not offered for Live Activities, which take 5 or 10: validation refuses it), and 10
    /// otherwise (APNs's own default).
    package static func priority(_ push: ResolvedPush) -> Int {
        if push.pushType == .background { return 5 }
        if push.isCritical { return 10 }
        switch push.message.priority {
        case .normal: return 5
        case .low: return push.pushType == .liveactivity ? 5 : 1
        case .default, .high, nil: return 10
        }
    }

    /// `apns-expiration`: now + ttl (`"0"` for a ttl of 0: one attempt, no storage), else `expiration`.
    package static func expiration(_ message: PushMessage, now: Date) -> String? {
        if let ttl = message.ttl {
            return ttl == 0 ? "0" : String(Int64(now.timeIntervalSince1970) + Int64(ttl))
        }
        return message.expiration.map { String($0) }
    }

    /// The `aps` dictionary; `now` is a Live Activity's `timestamp` when the push was not stamped at admission.
    package static func aps(_ push: ResolvedPush, now: Date) -> [String: JSONValue] {
        let message = push.message
        var aps: [String: JSONValue] = [:]
        if let activity = message.liveActivity, push.pushType == .liveactivity {
            liveActivity(activity, message: message, now: now, into: &aps)
        } else if push.pushType == .background {
            aps["content-available"] = .int(1)
        } else {
            let alert = alert(message)
            if !alert.isEmpty { aps["alert"] = .object(alert) }
            if let badge = message.badge { aps["badge"] = .int(Int64(badge)) }
            if let sound = sound(push) { aps["sound"] = sound }
            if message.contentAvailable == true { aps["content-available"] = .int(1) }
            if message.mutableContent == true || message.image != nil { aps["mutable-content"] = .int(1) }
            if push.pushType == .widgets { aps["content-changed"] = .bool(true) }
        }
        if push.isCritical {
            aps["interruption-level"] = .string(InterruptionLevel.critical.rawValue)
        } else if let level = message.interruptionLevel {
            aps["interruption-level"] = .string(level.rawValue)
        }
        if let threadId = message.threadId { aps["thread-id"] = .string(threadId) }
        if let category = message.categoryId { aps["category"] = .string(category) }
        if let score = message.relevanceScore { aps["relevance-score"] = .double(score) }
        if let target = message.targetContentId { aps["target-content-id"] = .string(target) }
        if let filter = message.filterCriteria { aps["filter-criteria"] = .string(filter) }
        return aps
    }

    /// `aps.alert`: the texts and their localisation keys (Apple, "Generating a remote notification", Table 2).
    private static func alert(_ message: PushMessage) -> [String: JSONValue] {
        var alert: [String: JSONValue] = [:]
        func set(_ key: String, _ value: String?) {
            if let value { alert[key] = .string(value) }
        }
        func set(_ key: String, _ values: [String]?) {
            if let values { alert[key] = .array(values.map(JSONValue.string)) }
        }
        set("title", message.title)
        set("subtitle", message.subtitle)
        set("body", message.body)
        set("title-loc-key", message.titleLocKey)
        set("title-loc-args", message.titleLocArgs)
        set("subtitle-loc-key", message.subtitleLocKey)
        set("subtitle-loc-args", message.subtitleLocArgs)
        set("loc-key", message.bodyLocKey)
        set("loc-args", message.bodyLocArgs)
        set("launch-image", message.launchImage)
        return alert
    }

    /// A Live Activity's keys (PROTOCOLS.md §1.8); its alert is the message's title, body and localisation keys, with
    /// the sound inside the alert as in Apple's examples, and only when one is named (an update should not chime).
    private static func liveActivity(
        _ activity: LiveActivity,
        message: PushMessage,
        now: Date,
        into aps: inout [String: JSONValue]
    ) {
        aps["event"] = .string(activity.event.rawValue)
        aps["timestamp"] = .int(activity.timestamp ?? Int64(now.timeIntervalSince1970))
        if let state = activity.contentState { aps["content-state"] = .object(state) }
        if let date = activity.staleDate { aps["stale-date"] = .int(date) }
        if let date = activity.dismissalDate { aps["dismissal-date"] = .int(date) }
        if let type = activity.attributesType { aps["attributes-type"] = .string(type) }
        if let attributes = activity.attributes { aps["attributes"] = .object(attributes) }
        if activity.inputPushToken == true { aps["input-push-token"] = .int(1) }
        if let channel = activity.inputPushChannel { aps["input-push-channel"] = .string(channel) }
        var alert = alert(message)
        if let name = message.sound.name { alert["sound"] = .string(name) }
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let score = activity.relevanceScore { aps["relevance-score"] = .double(score) }
    }

    /// `aps.sound`: the critical dictionary for critical alerts; otherwise the name as given, `"default"` when
    /// absent on a visible alert (one that shows something), nothing when `null` or on a push that shows nothing.
    private static func sound(_ push: ResolvedPush) -> JSONValue? {
        let sound = push.message.sound
        if push.isCritical {
            return .object([
                "critical": .int(1),
                "name": .string(sound.name ?? "default"),
                "volume": .double(sound.volume ?? defaultCriticalVolume),
            ])
        }
        switch sound {
        case .silent: return nil
        case .unspecified: return push.pushType == .alert && push.message.isVisible ? .string("default") : nil
        case .named(let name): return .string(name)
        case .dictionary(_, let name, _): return .string(name ?? "default")
        }
    }
}
