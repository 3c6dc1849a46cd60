/// One push as a caller asked for it: the native API's message, already type-checked.
///
/// A message may address up to 100 device tokens; ``ResolvedPush`` is the same message resolved for one token.
/// Build one from JSON with ``PushMessage/parse(_:at:issues:)``, which checks every field and collects every problem;
/// the compatibility APIs build one from their own request shapes.
package struct PushMessage: Sendable, Equatable {
    package var to: [String]
    package var provider: Provider?
    package var title: String?
    package var subtitle: String?
    package var body: String?
    package var data: [String: JSONValue]?
    package var sound: SoundSetting
    package var badge: Int?
    package var priority: PushPriority?
    package var ttl: Int?
    package var expiration: Int64?
    package var collapseId: String?
    package var threadId: String?
    package var categoryId: String?
    package var channelId: String?
    package var mutableContent: Bool?
    package var contentAvailable: Bool?
    package var interruptionLevel: InterruptionLevel?
    package var isCriticalAlert: Bool?
    package var image: String?
    /// Android: the notification's small icon, a drawable resource of the app (FCM `android.notification.icon`,
    /// Expo `icon`); APNs has no such field.
    package var icon: String?
    package var pushType: APNsPushType?
    package var apnsEnvironment: APNsEnvironment?
    /// The app this message is for (`[apps.<name>]`, or `default`); `nil` takes the tenant's default app.
    package var app: String?
    /// A Live Activity start, update or end (APNs tokens only); implies push type `liveactivity`.
    package var liveActivity: LiveActivity?
    /// `aps.relevance-score`, 0 to 1: the order of the app's notifications in the summary.
    package var relevanceScore: Double?
    /// Localised alert: keys of the app's strings and the arguments filling their `%@` (APNs `aps.alert`'s
    /// `title-loc-key`, `subtitle-loc-key`, `loc-key` and their `-args`; FCM's `title_loc_key`, `body_loc_key` and
    /// their `_args`).
    package var titleLocKey: String?
    package var titleLocArgs: [String]?
    package var subtitleLocKey: String?
    package var subtitleLocArgs: [String]?
    package var bodyLocKey: String?
    package var bodyLocArgs: [String]?
    /// `aps.alert.launch-image`: the image shown when the alert opens the app.
    package var launchImage: String?
    /// `aps.target-content-id`: the window brought forward.
    package var targetContentId: String?
    /// `aps.filter-criteria`: matched against the current Focus.
    package var filterCriteria: String?
    /// Android only (FCM `android.notification`): `click_action`, `notification_count`, `visibility`, `color`
    /// (`#rrggbb`) and `notification_priority`; `android.direct_boot_ok`.
    package var clickAction: String?
    package var notificationCount: Int?
    package var visibility: AndroidVisibility?
    package var color: String?
    package var notificationPriority: AndroidNotificationPriority?
    package var directBootOk: Bool?

    package init(
        to: [String],
        provider: Provider? = nil,
        title: String? = nil,
        subtitle: String? = nil,
        body: String? = nil,
        data: [String: JSONValue]? = nil,
        sound: SoundSetting = .unspecified,
        badge: Int? = nil,
        priority: PushPriority? = nil,
        ttl: Int? = nil,
        expiration: Int64? = nil,
        collapseId: String? = nil,
        threadId: String? = nil,
        categoryId: String? = nil,
        channelId: String? = nil,
        mutableContent: Bool? = nil,
        contentAvailable: Bool? = nil,
        interruptionLevel: InterruptionLevel? = nil,
        isCriticalAlert: Bool? = nil,
        image: String? = nil,
        icon: String? = nil,
        pushType: APNsPushType? = nil,
        apnsEnvironment: APNsEnvironment? = nil
    ) {
        self.to = to
        self.provider = provider
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.data = data
        self.sound = sound
        self.badge = badge
        self.priority = priority
        self.ttl = ttl
        self.expiration = expiration
        self.collapseId = collapseId
        self.threadId = threadId
        self.categoryId = categoryId
        self.channelId = channelId
        self.mutableContent = mutableContent
        self.contentAvailable = contentAvailable
        self.interruptionLevel = interruptionLevel
        self.isCriticalAlert = isCriticalAlert
        self.image = image
        self.icon = icon
        self.pushType = pushType
        self.apnsEnvironment = apnsEnvironment
    }
}

/// The `sound` field: absent, explicitly `null`, a name, or the critical-alert dictionary.
package enum SoundSetting: Sendable, Equatable {
    /// The field was absent: alerts play `"default"`.
    case unspecified
    /// The field was `null`: the push is silent.
    case silent
    /// A sound file name, or `"default"`.
    case named(String)
    /// `{critical, name, volume}`; each part optional.
    case dictionary(critical: Bool?, name: String?, volume: Double?)

    /// The sound's name when one was given.
    package var name: String? {
        switch self {
        case .named(let name): name
        case .dictionary(_, let name, _): name
        case .unspecified, .silent: nil
        }
    }

    /// The volume when one was given.
    package var volume: Double? {
        if case .dictionary(_, _, let volume) = self { volume } else { nil }
    }

    /// Whether the dictionary asks for a critical sound.
    package var isCritical: Bool {
        if case .dictionary(critical: true, _, _) = self { true } else { false }
    }
}

extension PushMessage {
    /// Whether this message is a critical alert, however the caller said so.
    ///
    /// Callers express criticality three ways: the native `isCriticalAlert`, `interruptionLevel: "critical"`, and
    /// `sound.critical` (OneUptime's installs send the last two). All three mean the same thing, so that tenant policy
    /// on critical alerts cannot be bypassed by choosing another spelling.
    package var isCritical: Bool {
        isCriticalAlert == true || interruptionLevel == .critical || sound.isCritical
    }

    /// Whether the message shows something: a title, subtitle, body, image or a localised title, subtitle or body,
    /// or it is critical. Only a visible push plays `"default"` when `sound` is absent; one that is not stays silent.
    package var isVisible: Bool {
        title != nil || subtitle != nil || body != nil || image != nil || titleLocKey != nil || subtitleLocKey != nil
            || bodyLocKey != nil || isCritical
    }

    /// Whether `sound` names a sound to play (`null` and absent do not).
    package var hasSound: Bool {
        switch sound {
        case .named, .dictionary: true
        case .unspecified, .silent: false
        }
    }

    /// The APNs push type: as given; `liveactivity` for a Live Activity; `alert` for a push that shows something,
    /// sets a badge or plays a sound; else (data only, or content-available) `background`.
    package var effectivePushType: APNsPushType {
        if let pushType { return pushType }
        if liveActivity != nil { return .liveactivity }
        if isVisible || badge != nil || hasSound { return .alert }
        return .background
    }

    /// Whether the message has nothing to deliver: nothing shown, no badge, no sound, no data, not content-available,
    /// no Live Activity, and no push type that carries something of its own (only `alert`, or none, is checked).
    package var isEmpty: Bool {
        !isVisible && badge == nil && !hasSound && (data?.isEmpty ?? true) && contentAvailable != true
            && liveActivity == nil && (pushType == nil || pushType == .alert)
    }
}
