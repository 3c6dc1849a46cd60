/// A Live Activity push (ActivityKit): the native message's `liveActivity` field.
///
/// It becomes the `aps` keys of PROTOCOLS.md §1.8 (`event`, `timestamp`, `content-state`, …) on an APNs push of type
/// `liveactivity`; the message's own `title`, `body` and `sound` become the activity's `alert`. Only APNs tokens take
/// one: Expo has no such fields, and FCM's route to Live Activities (`apns.live_activity_token`) is not offered.
package struct LiveActivity: Sendable, Equatable {
    package var event: LiveActivityEvent
    /// `content-state`: decoded by the app into its `ContentState`; required for `start` and `update`, the final state
    /// on `end`.
    package var contentState: [String: JSONValue]?
    /// `timestamp`, UNIX seconds: the device shows the most recent state. Absent in a request; the relay fixes it to
    /// its clock when it admits the push (``ResolvedPush/stampLiveActivity(at:)``), so every resend carries the same.
    package var timestamp: Int64?
    /// `stale-date`, UNIX seconds (`start`, `update`).
    package var staleDate: Int64?
    /// `dismissal-date`, UNIX seconds (`end` only); past means remove now.
    package var dismissalDate: Int64?
    /// `relevance-score`: relative among the app's activities (Apple's examples use 50 and 100), not bounded to 0…1.
    package var relevanceScore: Double?
    /// `attributes-type` and `attributes`: `start` only, both required there.
    package var attributesType: String?
    package var attributes: [String: JSONValue]?
    /// `input-push-token: 1` (`start`, iOS 18): the started activity gets its own update token.
    package var inputPushToken: Bool?
    /// `input-push-channel` (`start`, iOS 18): the broadcast channel the activity subscribes to.
    package var inputPushChannel: String?

    package init(
        event: LiveActivityEvent,
        contentState: [String: JSONValue]? = nil,
        timestamp: Int64? = nil,
        staleDate: Int64? = nil,
        dismissalDate: Int64? = nil,
        relevanceScore: Double? = nil,
        attributesType: String? = nil,
        attributes: [String: JSONValue]? = nil,
        inputPushToken: Bool? = nil,
        inputPushChannel: String? = nil
    ) {
        self.event = event
        self.contentState = contentState
        self.timestamp = timestamp
        self.staleDate = staleDate
        self.dismissalDate = dismissalDate
        self.relevanceScore = relevanceScore
        self.attributesType = attributesType
        self.attributes = attributes
        self.inputPushToken = inputPushToken
        self.inputPushChannel = inputPushChannel
    }
}

/// `aps.event` of a Live Activity push.
package enum LiveActivityEvent: String, Sendable, CaseIterable, Codable {
    /// Push-to-start (iOS 17.2+), sent to the app's push-to-start token.
    case start
    case update
    case end
}
