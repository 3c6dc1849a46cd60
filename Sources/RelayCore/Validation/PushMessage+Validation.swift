package import Foundation

extension PushMessage {
    /// At most this many device tokens in one message (and, by default, in one request).
    package static let maxTokens = 100
    /// Apple: `apns-collapse-id` is at most 64 bytes.
    package static let maxCollapseIdBytes = 64
    /// An Android drawable's resource name; far longer is a mistake, not an icon.
    package static let maxIconBytes = 256

    /// Checks every rule on a typed message and resolves each token's provider.
    ///
    /// - Parameters:
    ///   - path: where this message sits in the request, for the issues' paths.
    ///   - issues: every problem found is appended here.
    ///   - skipping: paths already reported (by type checks), not to be reported again.
    /// - Returns: the validated message, or `nil` when any rule failed.
    package func validated(
        at path: JSONPath,
        issues: inout [ValidationIssue],
        skipping: Set<String> = []
    ) -> ValidatedMessage? {
        var found: [ValidationIssue] = []
        func report(_ field: JSONPath, _ message: String) {
            if !skipping.contains(field.description) { found.append(ValidationIssue(field, message)) }
        }

        // Tokens: 1 to 100, each of a recognised shape (or of the named provider's shape).
        let toPath = path.appending("to")
        var providers: [Provider] = []
        if !(1...Self.maxTokens).contains(to.count) {
            report(toPath, "must hold 1 to \(Self.maxTokens) device tokens, not \(to.count)")
        }
        for (index, token) in to.enumerated() {
            let tokenPath = toPath.appending(index)
            if let provider {
                if DeviceToken.matches(token, provider: provider) {
                    providers.append(provider)
                } else {
                    report(tokenPath, "is not \(Self.describe(provider)) (\(token.utf8.count) characters)")
                }
            } else if let inferred = DeviceToken.inferProvider(token) {
                providers.append(inferred)
            } else {
                report(
                    tokenPath,
                    "is not a recognised device token (\(token.utf8.count) characters): expected ExponentPushToken[…], "
                        + "an APNs token (even-length hex, 64 to 200 characters) or an FCM registration token "
                        + "(100 to 4096 characters of A-Z a-z 0-9 _ : -)"
                )
            }
        }

        // Ranges.
        if let volume = sound.volume, !(0.0...1.0).contains(volume) {
            report(path.appending("sound").appending("volume"), "must be from 0.0 to 1.0")
        }
        if let badge, badge < 0 { report(path.appending("badge"), "must be 0 or more") }
        if let ttl, ttl < 0 { report(path.appending("ttl"), "must be 0 or more seconds") }
        if let expiration, expiration < 0 { report(path.appending("expiration"), "must be a UNIX time in seconds") }
        if let collapseId, collapseId.utf8.count > Self.maxCollapseIdBytes {
            report(
                path.appending("collapseId"),
                "must be at most \(Self.maxCollapseIdBytes) bytes, not \(collapseId.utf8.count)"
            )
        }
        if let icon, icon.isEmpty || icon.utf8.count > Self.maxIconBytes {
            report(path.appending("icon"), "must be 1 to \(Self.maxIconBytes) bytes, not \(icon.utf8.count)")
        }
        if let image, !Self.isHTTPSURL(image) {
            report(path.appending("image"), "must be an https URL")
        }

        // Push types: a critical alert is an alert; a background push shows nothing.
        let pushType = effectivePushType
        if isCritical && liveActivity != nil {
            report(path.appending("liveActivity"), "must be absent for a critical alert, which is an 'alert' push")
        } else if isCritical && pushType != .alert {
            report(path.appending("pushType"), "must be 'alert' for a critical alert, not '\(pushType.rawValue)'")
        } else if pushType == .background {
            let shown: [(String, Bool)] = [
                ("title", title != nil), ("subtitle", subtitle != nil), ("body", body != nil),
                ("image", image != nil), ("badge", badge != nil), ("sound", sound.name != nil || sound.isCritical),
                ("titleLocKey", titleLocKey != nil), ("subtitleLocKey", subtitleLocKey != nil),
                ("bodyLocKey", bodyLocKey != nil),
            ]
            for (field, present) in shown where present {
                report(path.appending(field), "must be absent: a background push carries no alert, sound or badge")
            }
        }
        if priority == .low && liveActivity != nil {
            report(path.appending("priority"), "must not be 'low' for a Live Activity, which takes 'normal' (5) or 10")
        }
        checkLiveActivity(at: path, pushType: pushType, report: report)
        checkAlertFields(at: path, report: report)
        checkProviderFields(at: path, providers: providers, report: report)

        // Custom data keys the providers reserve.
        if let data {
            let dataPath = path.appending("data")
            if providers.contains(.apns) {
                if data["aps"] != nil { report(dataPath.appending("aps"), "is reserved by APNs") }
                if image != nil && data["image"] != nil {
                    report(
                        dataPath.appending("image"),
                        "conflicts with the 'image' field, which APNs carries as data.image")
                }
            }
            if providers.contains(.fcm) {
                for key in data.keys.sorted() where Self.isReservedByFCM(key) {
                    report(dataPath.appending(key), "is reserved by FCM ('from', 'message_type', 'google…', 'gcm…')")
                }
            }
        }

        // Said only of a message with no other problem: a field of the wrong type reads as absent, so the message
        // would look empty when it is not.
        if isEmpty && found.isEmpty && skipping.isEmpty {
            report(
                path,
                "has nothing to deliver: give a title, body or other visible content, a badge, a sound, data, "
                    + "contentAvailable or a liveActivity")
        }

        issues += found
        guard found.isEmpty, providers.count == to.count, !to.isEmpty else { return nil }
        return ValidatedMessage(message: self, providers: providers)
    }

    /// Live Activities: which keys each event takes (PROTOCOLS.md §1.8), and the push type they need.
    private func checkLiveActivity(at path: JSONPath, pushType: APNsPushType, report: (JSONPath, String) -> Void) {
        guard let activity = liveActivity else {
            if pushType == .liveactivity {
                report(
                    path.appending("liveActivity"),
                    "is required with pushType 'liveactivity': {event, contentState, …} (a device ignores a Live "
                        + "Activity push without them)")
            }
            return
        }
        let activityPath = path.appending("liveActivity")
        if relevanceScore != nil {
            report(path.appending("relevanceScore"), "is liveActivity.relevanceScore for a Live Activity")
        }
        if pushType != .liveactivity && !isCritical {
            report(path.appending("pushType"), "must be 'liveactivity' or absent with liveActivity")
        }
        let notCarried: [(String, Bool)] = [
            ("badge", badge != nil), ("image", image != nil), ("mutableContent", mutableContent != nil),
            ("contentAvailable", contentAvailable != nil),
        ]
        for (field, present) in notCarried where present {
            report(path.appending(field), "is not part of a Live Activity push")
        }
        let event = activity.event.rawValue
        if activity.contentState == nil && activity.event != .end {
            report(activityPath.appending("contentState"), "is required for '\(event)'")
        }
        if activity.event == .start {
            if activity.attributesType == nil {
                report(activityPath.appending("attributesType"), "is required for 'start'")
            }
            if activity.attributes == nil { report(activityPath.appending("attributes"), "is required for 'start'") }
            if title == nil && body == nil {
                report(path.appending("title"), "is required for a Live Activity 'start' (with body: its alert)")
            }
        } else {
            let startOnly: [(String, Bool)] = [
                ("attributesType", activity.attributesType != nil), ("attributes", activity.attributes != nil),
                ("inputPushToken", activity.inputPushToken != nil),
                ("inputPushChannel", activity.inputPushChannel != nil),
            ]
            for (field, present) in startOnly where present {
                report(activityPath.appending(field), "is only for 'start', not '\(event)'")
            }
        }
        if activity.dismissalDate != nil && activity.event != .end {
            report(activityPath.appending("dismissalDate"), "is only for 'end', not '\(event)'")
        }
        if activity.staleDate != nil && activity.event == .end {
            report(activityPath.appending("staleDate"), "is only for 'start' and 'update', not 'end'")
        }
        if activity.inputPushToken == false {
            report(activityPath.appending("inputPushToken"), "must be true or absent")
        }
        if let channel = activity.inputPushChannel, channel.isEmpty {
            report(activityPath.appending("inputPushChannel"), "must be a channel id, not empty")
        }
        let times: [(String, Int64?)] = [
            ("timestamp", activity.timestamp), ("staleDate", activity.staleDate),
            ("dismissalDate", activity.dismissalDate),
        ]
        for (field, value) in times where (value ?? 0) < 0 {
            report(activityPath.appending(field), "must be a UNIX time in seconds")
        }
        if let score = activity.relevanceScore, !score.isFinite {
            report(activityPath.appending("relevanceScore"), "must be a finite number")
        }
    }

    /// Localised alert keys, the relevance score and Android's display fields.
    private func checkAlertFields(at path: JSONPath, report: (JSONPath, String) -> Void) {
        if let relevanceScore, !(0.0...1.0).contains(relevanceScore) {
            report(path.appending("relevanceScore"), "must be from 0.0 to 1.0")
        }
        let locArgs: [(String, String, Bool, Bool)] = [
            ("titleLocArgs", "titleLocKey", titleLocArgs != nil, titleLocKey != nil),
            ("subtitleLocArgs", "subtitleLocKey", subtitleLocArgs != nil, subtitleLocKey != nil),
            ("bodyLocArgs", "bodyLocKey", bodyLocArgs != nil, bodyLocKey != nil),
        ]
        for (field, key, hasArgs, hasKey) in locArgs where hasArgs && !hasKey {
            report(path.appending(field), "needs '\(key)': the arguments fill that string's %@")
        }
        if let notificationCount, notificationCount < 0 || notificationCount > Int(Int32.max) {
            report(path.appending("notificationCount"), "must be from 0 to \(Int32.max)")
        }
        if let color, !Self.isHexColor(color) {
            report(path.appending("color"), "must be a colour '#rrggbb', not '\(color.prefix(16))'")
        }
        if !isVisible {
            let display: [(String, Bool)] = [
                ("launchImage", launchImage != nil), ("clickAction", clickAction != nil),
                ("notificationCount", notificationCount != nil), ("visibility", visibility != nil),
                ("color", color != nil), ("notificationPriority", notificationPriority != nil),
            ]
            for (field, present) in display where present {
                report(
                    path.appending(field),
                    "has no effect on a push that shows nothing: give a title, body or other visible content")
            }
        }
    }

    /// Fields some providers cannot carry: a Live Activity is for APNs only, and Expo has no field for the localised
    /// alert, Focus, relevance or Android display options. Each is reported once, naming the first such token.
    private func checkProviderFields(
        at path: JSONPath,
        providers: [Provider],
        report: (JSONPath, String) -> Void
    ) {
        if liveActivity != nil, let index = providers.firstIndex(where: { $0 != .apns }) {
            report(
                path.appending("liveActivity"),
                "is for APNs tokens only; to[\(index)] is \(Self.describe(providers[index]))")
        }
        if !isVisible, let data, providers.contains(.fcm) {
            let carried: [(String, Bool)] = [("badge", badge != nil), ("sound", sound.name != nil)]
            for (key, present) in carried where present && data[key] != nil {
                report(
                    path.appending("data").appending(key),
                    "conflicts with '\(key)', which FCM carries as data.\(key) on a push that shows nothing")
            }
        }
        guard let index = providers.firstIndex(of: .expo) else { return }
        let notForExpo: [(String, Bool)] = [
            ("relevanceScore", relevanceScore != nil), ("titleLocKey", titleLocKey != nil),
            ("titleLocArgs", titleLocArgs != nil), ("subtitleLocKey", subtitleLocKey != nil),
            ("subtitleLocArgs", subtitleLocArgs != nil), ("bodyLocKey", bodyLocKey != nil),
            ("bodyLocArgs", bodyLocArgs != nil), ("launchImage", launchImage != nil),
            ("targetContentId", targetContentId != nil), ("filterCriteria", filterCriteria != nil),
            ("clickAction", clickAction != nil), ("notificationCount", notificationCount != nil),
            ("visibility", visibility != nil), ("color", color != nil),
            ("notificationPriority", notificationPriority != nil), ("directBootOk", directBootOk != nil),
        ]
        for (field, present) in notForExpo where present {
            report(
                path.appending(field),
                "is not carried by Expo, which has no such field; to[\(index)] is an Expo push token")
        }
    }

    /// `#rrggbb`.
    private static func isHexColor(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 7 && bytes[0] == UInt8(ascii: "#") && bytes.dropFirst().allSatisfy(AuditHex.isDigit)
    }

    private static func describe(_ provider: Provider) -> String {
        switch provider {
        case .apns: "an APNs device token (even-length hex, 64 to 200 characters)"
        case .fcm: "an FCM registration token (100 to 4096 characters of A-Z a-z 0-9 _ : -)"
        case .expo: "an Expo push token (ExponentPushToken[…])"
        }
    }

    private static func isHTTPSURL(_ text: String) -> Bool {
        guard let url = URL(string: text), url.scheme?.lowercased() == "https", let host = url.host else {
            return false
        }
        return !host.isEmpty
    }

    /// Firebase: data keys must not be `from`, `message_type`, or start with `google` or `gcm`.
    private static func isReservedByFCM(_ key: String) -> Bool {
        let lower = key.lowercased()
        return lower == "from" || lower == "message_type" || lower.hasPrefix("google") || lower.hasPrefix("gcm")
    }
}

/// A message that passed validation, with the provider of each of its tokens.
///
/// Only ``PushMessage/validated(at:issues:skipping:)`` makes one, so holding one proves the rules were checked.
package struct ValidatedMessage: Sendable, Equatable {
    package let message: PushMessage
    /// The provider of each token, in the order of `message.to`.
    package let providers: [Provider]

    fileprivate init(message: PushMessage, providers: [Provider]) {
        self.message = message
        self.providers = providers
    }

    /// The message resolved for each of its tokens, in order.
    package var pushes: [ResolvedPush] {
        zip(message.to, providers).map { ResolvedPush(message: message, token: $0, provider: $1) }
    }
}

/// A validated message resolved for one device token: what a provider request is built from.
package struct ResolvedPush: Sendable, Equatable {
    package private(set) var message: PushMessage
    package let token: String
    package let provider: Provider
    /// Normalised criticality (``PushMessage/isCritical``).
    package let isCritical: Bool
    package let pushType: APNsPushType
    /// The Android channel of this push when critical, set by the relay from the tenant's policy; `nil` uses
    /// ``PayloadSettings/androidCriticalChannelId``.
    package var criticalChannel: String?
    /// The `apns-id` of this push, fixed when the relay admits it, so that every send of it, a resend after a restart
    /// included, carries the same id; `nil` lets the APNs sender make one.
    package var apnsID: UUID?
    /// When the relay stops trying to send it, fixed when it was admitted; `nil` counts its deadline from the start
    /// of this send (``RetryPolicy/deadline(start:ttl:expiration:date:)``). Set for a push resumed from the delivery
    /// journal, so that a relay that restarts, or takes over another's journal, does not give it a new retry window.
    package var sendDeadline: Date?
    /// The app whose credentials send it: the message's `app`, or, once the relay admits it, the tenant's default
    /// app (``AppName/default`` until then).
    package var app: String

    fileprivate init(message: PushMessage, token: String, provider: Provider) {
        self.message = message
        self.token = token
        self.provider = provider
        self.app = message.app ?? AppName.default
        self.isCritical = message.isCritical
        self.pushType = message.effectivePushType
    }
    /// Fixes a Live Activity's `timestamp` to `now` when the caller gave none, so that every send of the push, a
    /// resend from the journal after a restart included, tells the device the same time (it shows the newest state).
    package mutating func stampLiveActivity(at now: Date) {
        guard message.liveActivity != nil, message.liveActivity?.timestamp == nil else { return }
        message.liveActivity?.timestamp = Int64(now.timeIntervalSince1970)
    }
}
