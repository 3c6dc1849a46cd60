import Foundation
import Testing

@testable import RelayCore

/// Issue 35's rules: Live Activities, the silent and empty pushes, localised alerts, Focus and relevance, Android's
/// display fields, and the fields a provider cannot carry; each with a message that passes and one that fails,
/// naming its path.
let payloadFieldRuleCases: [RuleCase] = [
    // Nothing to deliver.
    RuleCase(
        rule: "a message carries something", passing: #"{"to":"\#(apnsToken)","badge":0}"#,
        failing: #"{"to":"\#(apnsToken)","threadId":"t","mutableContent":true}"#, path: ""),
    RuleCase(
        rule: "data alone is something", passing: #"{"to":"\#(fcmToken)","data":{"sync":"1"}}"#,
        failing: #"{"to":"\#(fcmToken)","data":{}}"#, path: ""),
    RuleCase(
        rule: "a silent sound is not something", passing: #"{"to":"\#(apnsToken)","sound":"chime.caf"}"#,
        failing: #"{"to":"\#(apnsToken)","sound":null}"#, path: ""),
    // Live Activities.
    RuleCase(
        rule: "liveActivity is an object",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":{}}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":"update"}"#, path: "liveActivity"),
    RuleCase(
        rule: "liveActivity.event is required",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"contentState":{}}}"#, path: "liveActivity.event"),
    RuleCase(
        rule: "liveActivity.event is start, update or end",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"stop"}}"#, path: "liveActivity.event"),
    RuleCase(
        rule: "an update needs contentState",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":{"a":1}}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update"}}"#, path: "liveActivity.contentState"),
    RuleCase(
        rule: "contentState is an object",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":{"a":1}}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":[1]}}"#,
        path: "liveActivity.contentState"),
    RuleCase(
        rule: "a start needs attributesType",
        passing:
            #"{"to":"\#(apnsToken)","title":"t","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{}}}"#,
        failing:
            #"{"to":"\#(apnsToken)","title":"t","liveActivity":{"event":"start","contentState":{},"attributes":{}}}"#,
        path: "liveActivity.attributesType"),
    RuleCase(
        rule: "a start needs attributes",
        passing:
            #"{"to":"\#(apnsToken)","body":"b","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{}}}"#,
        failing:
            #"{"to":"\#(apnsToken)","body":"b","liveActivity":{"event":"start","contentState":{},"attributesType":"A"}}"#,
        path: "liveActivity.attributes"),
    RuleCase(
        rule: "a start needs an alert",
        passing:
            #"{"to":"\#(apnsToken)","title":"t","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{}}}"#,
        failing:
            #"{"to":"\#(apnsToken)","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{}}}"#,
        path: "title"),
    RuleCase(
        rule: "attributes only on start",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":{}}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":{},"attributes":{}}}"#,
        path: "liveActivity.attributes"),
    RuleCase(
        rule: "attributesType only on start",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","attributesType":"A"}}"#,
        path: "liveActivity.attributesType"),
    RuleCase(
        rule: "inputPushToken only on start",
        passing:
            #"{"to":"\#(apnsToken)","title":"t","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{},"inputPushToken":true}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":{},"inputPushToken":true}}"#,
        path: "liveActivity.inputPushToken"),
    RuleCase(
        rule: "inputPushToken is true or absent",
        passing:
            #"{"to":"\#(apnsToken)","title":"t","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{},"inputPushToken":true}}"#,
        failing:
            #"{"to":"\#(apnsToken)","title":"t","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{},"inputPushToken":false}}"#,
        path: "liveActivity.inputPushToken"),
    RuleCase(
        rule: "inputPushChannel only on start",
        passing:
            #"{"to":"\#(apnsToken)","title":"t","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{},"inputPushChannel":"c"}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","inputPushChannel":"c"}}"#,
        path: "liveActivity.inputPushChannel"),
    RuleCase(
        rule: "dismissalDate only on end",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","dismissalDate":1800000000}}"#,
        failing:
            #"{"to":"\#(apnsToken)","title":"t","liveActivity":{"event":"start","contentState":{},"attributesType":"A","attributes":{},"dismissalDate":1800000000}}"#,
        path: "liveActivity.dismissalDate"),
    RuleCase(
        rule: "staleDate not on end",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":{},"staleDate":1800000000}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","staleDate":1800000000}}"#,
        path: "liveActivity.staleDate"),
    RuleCase(
        rule: "timestamp is a UNIX time",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","timestamp":1800000000}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","timestamp":-5}}"#,
        path: "liveActivity.timestamp"),
    RuleCase(
        rule: "timestamp is an integer",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","timestamp":1800000000}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","timestamp":"now"}}"#,
        path: "liveActivity.timestamp"),
    RuleCase(
        rule: "unknown liveActivity fields are rejected by name",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","content-state":{}}}"#,
        path: #"liveActivity["content-state"]"#),
    RuleCase(
        rule: "a Live Activity is for APNs tokens only (FCM)",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":["\#(apnsToken)","\#(fcmToken)"],"liveActivity":{"event":"end"}}"#, path: "liveActivity"),
    RuleCase(
        rule: "a Live Activity is for APNs tokens only (Expo)",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(expoToken)","liveActivity":{"event":"end"}}"#, path: "liveActivity"),
    RuleCase(
        rule: "a Live Activity is not critical",
        passing: #"{"to":"\#(apnsToken)","body":"b","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","body":"b","isCriticalAlert":true,"liveActivity":{"event":"end"}}"#,
        path: "liveActivity"),
    RuleCase(
        rule: "a Live Activity takes no other push type",
        passing: #"{"to":"\#(apnsToken)","pushType":"liveactivity","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","pushType":"alert","liveActivity":{"event":"end"}}"#, path: "pushType"),
    RuleCase(
        rule: "pushType liveactivity needs liveActivity",
        passing: #"{"to":"\#(apnsToken)","pushType":"liveactivity","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","pushType":"liveactivity","title":"t"}"#, path: "liveActivity"),
    RuleCase(
        rule: "a Live Activity is not low priority",
        passing: #"{"to":"\#(apnsToken)","priority":"normal","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","priority":"low","liveActivity":{"event":"end"}}"#, path: "priority"),
    RuleCase(
        rule: "a Live Activity's relevance is its own",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end","relevanceScore":100}}"#,
        failing: #"{"to":"\#(apnsToken)","relevanceScore":0.5,"liveActivity":{"event":"end"}}"#,
        path: "relevanceScore"),
    RuleCase(
        rule: "a Live Activity has no badge",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","badge":1,"liveActivity":{"event":"end"}}"#, path: "badge"),
    RuleCase(
        rule: "a Live Activity has no image",
        passing: #"{"to":"\#(apnsToken)","body":"b","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","body":"b","image":"https://x.example/i.png","liveActivity":{"event":"end"}}"#,
        path: "image"),
    RuleCase(
        rule: "a Live Activity is not content-available",
        passing: #"{"to":"\#(apnsToken)","liveActivity":{"event":"end"}}"#,
        failing: #"{"to":"\#(apnsToken)","contentAvailable":true,"liveActivity":{"event":"end"}}"#,
        path: "contentAvailable"),
    // Spellings and alert fields.
    RuleCase(
        rule: "interruptionLevel takes timeSensitive",
        passing: #"{"to":"\#(apnsToken)","body":"b","interruptionLevel":"timeSensitive"}"#,
        failing: #"{"to":"\#(apnsToken)","body":"b","interruptionLevel":"TimeSensitive"}"#,
        path: "interruptionLevel"),
    RuleCase(
        rule: "relevanceScore is 0 to 1", passing: #"{"to":"\#(apnsToken)","body":"b","relevanceScore":1}"#,
        failing: #"{"to":"\#(apnsToken)","body":"b","relevanceScore":1.5}"#, path: "relevanceScore"),
    RuleCase(
        rule: "relevanceScore is a number", passing: #"{"to":"\#(apnsToken)","body":"b","relevanceScore":0.25}"#,
        failing: #"{"to":"\#(apnsToken)","body":"b","relevanceScore":"high"}"#, path: "relevanceScore"),
    RuleCase(
        rule: "titleLocArgs are strings",
        passing: #"{"to":"\#(apnsToken)","titleLocKey":"K","titleLocArgs":["1"]}"#,
        failing: #"{"to":"\#(apnsToken)","titleLocKey":"K","titleLocArgs":["1",2]}"#, path: "titleLocArgs[1]"),
    RuleCase(
        rule: "bodyLocArgs is an array", passing: #"{"to":"\#(apnsToken)","bodyLocKey":"K","bodyLocArgs":["1"]}"#,
        failing: #"{"to":"\#(apnsToken)","bodyLocKey":"K","bodyLocArgs":"1"}"#, path: "bodyLocArgs"),
    RuleCase(
        rule: "loc args need their key", passing: #"{"to":"\#(apnsToken)","subtitleLocKey":"K","subtitleLocArgs":[]}"#,
        failing: #"{"to":"\#(apnsToken)","body":"b","subtitleLocArgs":["x"]}"#, path: "subtitleLocArgs"),
    RuleCase(
        rule: "a background push shows no localised text",
        passing: #"{"to":"\#(apnsToken)","pushType":"background","data":{"a":"1"}}"#,
        failing: #"{"to":"\#(apnsToken)","pushType":"background","bodyLocKey":"K"}"#, path: "bodyLocKey"),
    RuleCase(
        rule: "launchImage needs something shown", passing: #"{"to":"\#(apnsToken)","body":"b","launchImage":"l.png"}"#,
        failing: #"{"to":"\#(apnsToken)","badge":1,"launchImage":"l.png"}"#, path: "launchImage"),
    // Android's display fields.
    RuleCase(
        rule: "visibility is private, public or secret",
        passing: #"{"to":"\#(fcmToken)","body":"b","visibility":"secret"}"#,
        failing: #"{"to":"\#(fcmToken)","body":"b","visibility":"hidden"}"#, path: "visibility"),
    RuleCase(
        rule: "notificationPriority is min to max",
        passing: #"{"to":"\#(fcmToken)","body":"b","notificationPriority":"min"}"#,
        failing: #"{"to":"\#(fcmToken)","body":"b","notificationPriority":"urgent"}"#, path: "notificationPriority"),
    RuleCase(
        rule: "color is #rrggbb", passing: ##"{"to":"\##(fcmToken)","body":"b","color":"#00AAff"}"##,
        failing: #"{"to":"\#(fcmToken)","body":"b","color":"red"}"#, path: "color"),
    RuleCase(
        rule: "notificationCount is 0 or more", passing: #"{"to":"\#(fcmToken)","body":"b","notificationCount":0}"#,
        failing: #"{"to":"\#(fcmToken)","body":"b","notificationCount":-1}"#, path: "notificationCount"),
    RuleCase(
        rule: "directBootOk is a boolean", passing: #"{"to":"\#(fcmToken)","body":"b","directBootOk":true}"#,
        failing: #"{"to":"\#(fcmToken)","body":"b","directBootOk":"yes"}"#, path: "directBootOk"),
    RuleCase(
        rule: "clickAction needs something shown",
        passing: #"{"to":"\#(fcmToken)","body":"b","clickAction":"FLUTTER_NOTIFICATION_CLICK"}"#,
        failing: #"{"to":"\#(fcmToken)","data":{"a":"1"},"clickAction":"FLUTTER_NOTIFICATION_CLICK"}"#,
        path: "clickAction"),
    RuleCase(
        rule: "FCM carries a silent badge in data.badge",
        passing: #"{"to":"\#(fcmToken)","badge":2,"data":{"unread":"2"}}"#,
        failing: #"{"to":"\#(fcmToken)","badge":2,"data":{"badge":"9"}}"#, path: "data.badge"),
    // What Expo cannot carry.
    RuleCase(
        rule: "Expo has no localised alert", passing: #"{"to":"\#(apnsToken)","bodyLocKey":"K"}"#,
        failing: #"{"to":["\#(apnsToken)","\#(expoToken)"],"bodyLocKey":"K"}"#, path: "bodyLocKey"),
    RuleCase(
        rule: "Expo has no colour", passing: ##"{"to":"\##(fcmToken)","body":"b","color":"#112233"}"##,
        failing: ##"{"to":"\##(expoToken)","body":"b","color":"#112233"}"##, path: "color"),
    RuleCase(
        rule: "Expo has no Focus filter", passing: #"{"to":"\#(apnsToken)","body":"b","filterCriteria":"work"}"#,
        failing: #"{"to":"\#(expoToken)","body":"b","filterCriteria":"work"}"#, path: "filterCriteria"),
]

/// Issue 35's rules beyond the table (which ``ValidationRuleTests`` runs with the others).
@Suite struct PayloadFieldRuleTests {
    @Test func aLiveActivityForAnotherProviderNamesTheToken() throws {
        let found = try issues(ofMessage: #"{"to":["\#(apnsToken)","\#(fcmToken)"],"liveActivity":{"event":"end"}}"#)
        #expect(found.first?.message.contains("to[1]") == true, "\(found)")
        #expect(found.first?.message.contains(fcmToken) == false)
    }

    @Test func everyBrokenLiveActivityRuleIsReported() throws {
        let found = try issues(
            ofMessage: #"{"to":"\#(apnsToken)","liveActivity":{"event":"update","attributes":{},"dismissalDate":1}}"#)
        #expect(
            Set(found.map(\.path))
                == ["liveActivity.contentState", "liveActivity.attributes", "liveActivity.dismissalDate"])
    }

    @Test func timeSensitiveIsStoredInAPNsSpelling() throws {
        let push = try #require(
            try pushes(#"{"to":"\#(apnsToken)","body":"b","interruptionLevel":"timeSensitive"}"#).first)
        #expect(push.message.interruptionLevel == .timeSensitive)
        #expect(push.message.nativeJSON.objectValue?["interruptionLevel"] == .string("time-sensitive"))
    }

    @Test func aLiveActivityIsStampedOnceAtAdmission() throws {
        var push = try #require(
            try pushes(#"{"to":"\#(apnsToken)","liveActivity":{"event":"update","contentState":{}}}"#).first)
        #expect(push.pushType == .liveactivity)
        push.stampLiveActivity(at: testNow)
        #expect(push.message.liveActivity?.timestamp == 1_800_000_000)
        push.stampLiveActivity(at: testNow.addingTimeInterval(60))
        #expect(push.message.liveActivity?.timestamp == 1_800_000_000)
    }

    @Test func silentPushTypes() throws {
        #expect(try pushes(#"{"to":"\#(apnsToken)","badge":0}"#).first?.pushType == .alert)
        #expect(try pushes(#"{"to":"\#(apnsToken)","sound":"a.caf"}"#).first?.pushType == .alert)
        #expect(try pushes(#"{"to":"\#(apnsToken)","data":{"a":1}}"#).first?.pushType == .background)
        #expect(try pushes(#"{"to":"\#(apnsToken)","contentAvailable":true}"#).first?.pushType == .background)
        #expect(try pushes(#"{"to":"\#(apnsToken)","bodyLocKey":"K"}"#).first?.pushType == .alert)
        #expect(try pushes(#"{"to":"\#(apnsToken)","data":{"a":1},"pushType":"voip"}"#).first?.pushType == .voip)
    }
}
