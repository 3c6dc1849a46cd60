import Foundation
import Testing

@testable import RelayCore

/// ``PushMessage/nativeJSON`` is the inverse of the parser: what the delivery journal keeps reads back as it was.
struct PushMessageNativeJSONTests {
    static let sounds: [SoundSetting] = [
        .unspecified, .silent, .named("chime.caf"), .dictionary(critical: true, name: "default", volume: 0.5),
        .dictionary(critical: nil, name: nil, volume: nil),
    ]

    @Test(arguments: sounds)
    func everyFieldReadsBackAsItWas(sound: SoundSetting) throws {
        let message = PushMessage(
            to: [TestTokens.apns],
            provider: .apns,
            title: "Incident #12",
            subtitle: "db-1",
            body: "Primary DB unreachable",
            data: [
                "incidentId": .int(12), "nested": .object(["ok": .bool(true), "list": .array([.null, .double(1.5)])]),
            ],
            sound: sound,
            badge: 3,
            priority: .high,
            ttl: 600,
            expiration: 1_900_000_000,
            collapseId: "incident-12",
            threadId: "incidents",
            categoryId: "ACK",
            channelId: "oncall_high",
            mutableContent: true,
            contentAvailable: false,
            interruptionLevel: sound.isCritical ? .critical : .timeSensitive,
            isCriticalAlert: sound.isCritical,
            image: "https://example.com/graph.png",
            icon: "ic_alert",
            pushType: .alert,
            apnsEnvironment: .sandbox
        )
        var issues: [ValidationIssue] = []
        let parsed = PushMessage.parse(message.nativeJSON, at: .root, issues: &issues)
        #expect(issues.isEmpty)
        #expect(parsed?.message == message)
    }

    /// Issue 35's fields, which the delivery journal must keep too: a Live Activity with every key, the localised
    /// alert, Focus and relevance, and Android's display fields.
    @Test func issue35FieldsReadBackAsTheyWere() throws {
        var activity = PushMessage(to: [TestTokens.apns], title: "Incident #12", priority: .normal)
        activity.liveActivity = LiveActivity(
            event: .start, contentState: ["status": .string("open")], timestamp: 1_800_000_000,
            staleDate: 1_800_003_600, relevanceScore: 75, attributesType: "IncidentAttributes",
            attributes: ["id": .string("12")], inputPushToken: true, inputPushChannel: "channel-1")
        var alert = PushMessage(to: [TestTokens.fcm], priority: .low, interruptionLevel: .timeSensitive)
        alert.relevanceScore = 0.5
        alert.titleLocKey = "T"
        alert.titleLocArgs = ["1"]
        alert.subtitleLocKey = "S"
        alert.subtitleLocArgs = []
        alert.bodyLocKey = "B"
        alert.bodyLocArgs = ["a", "b"]
        alert.launchImage = "launch.png"
        alert.targetContentId = "window"
        alert.filterCriteria = "work"
        alert.clickAction = "FLUTTER_NOTIFICATION_CLICK"
        alert.notificationCount = 4
        alert.visibility = .secret
        alert.color = "#a0b1c2"
        alert.notificationPriority = .max
        alert.directBootOk = true
        for message in [activity, alert] {
            var issues: [ValidationIssue] = []
            let parsed = PushMessage.parse(message.nativeJSON, at: .root, issues: &issues)
            #expect(issues.isEmpty, "\(issues)")
            #expect(parsed?.message == message)
        }
    }

    @Test func absentFieldsStayAbsent() throws {
        let message = PushMessage(to: [TestTokens.expo], body: "hi")
        #expect(message.nativeJSON == .object(["to": .array([.string(TestTokens.expo)]), "body": .string("hi")]))
        var issues: [ValidationIssue] = []
        #expect(PushMessage.parse(message.nativeJSON, at: .root, issues: &issues)?.message == message)
    }
}
