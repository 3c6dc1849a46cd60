import Testing

@testable import RelayCore

/// One validation rule: a message that passes it and one that fails it, with the path the failure must name.
struct RuleCase: CustomTestStringConvertible, Sendable {
    let rule: String
    let passing: String
    let failing: String
    let path: String

    var testDescription: String { rule }
}

let apnsToken = TestTokens.apns
let fcmToken = TestTokens.fcm
let expoToken = TestTokens.expo

let ruleCases: [RuleCase] = [
    // Types.
    RuleCase(
        rule: "title is a string", passing: #"{"to":"\#(apnsToken)","title":"Hi"}"#,
        failing: #"{"to":"\#(apnsToken)","title":5}"#, path: "title"),
    RuleCase(
        rule: "subtitle is a string", passing: #"{"to":"\#(apnsToken)","subtitle":"s"}"#,
        failing: #"{"to":"\#(apnsToken)","subtitle":["s"]}"#, path: "subtitle"),
    RuleCase(
        rule: "body is a string", passing: #"{"to":"\#(apnsToken)","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","body":{"text":"b"}}"#, path: "body"),
    RuleCase(
        rule: "threadId is a string", passing: #"{"to":"\#(apnsToken)","threadId":"t","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","threadId":1}"#, path: "threadId"),
    RuleCase(
        rule: "categoryId is a string", passing: #"{"to":"\#(apnsToken)","categoryId":"c","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","categoryId":true}"#, path: "categoryId"),
    RuleCase(
        rule: "channelId is a string", passing: #"{"to":"\#(fcmToken)","channelId":"c","body":"b"}"#,
        failing: #"{"to":"\#(fcmToken)","channelId":7}"#, path: "channelId"),
    RuleCase(
        rule: "mutableContent is a boolean", passing: #"{"to":"\#(apnsToken)","mutableContent":true,"body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","mutableContent":"yes"}"#, path: "mutableContent"),
    RuleCase(
        rule: "contentAvailable is a boolean", passing: #"{"to":"\#(apnsToken)","contentAvailable":true}"#,
        failing: #"{"to":"\#(apnsToken)","contentAvailable":1}"#, path: "contentAvailable"),
    RuleCase(
        rule: "isCriticalAlert is a boolean", passing: #"{"to":"\#(apnsToken)","body":"x","isCriticalAlert":true}"#,
        failing: #"{"to":"\#(apnsToken)","body":"x","isCriticalAlert":"true"}"#, path: "isCriticalAlert"),
    RuleCase(
        rule: "sound is a string, null or an object", passing: #"{"to":"\#(apnsToken)","sound":null,"body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","sound":3}"#, path: "sound"),
    RuleCase(
        rule: "sound.critical is a boolean", passing: #"{"to":"\#(apnsToken)","sound":{"critical":true}}"#,
        failing: #"{"to":"\#(apnsToken)","sound":{"critical":1}}"#, path: "sound.critical"),
    RuleCase(
        rule: "sound.name is a string", passing: #"{"to":"\#(apnsToken)","sound":{"name":"a.caf"}}"#,
        failing: #"{"to":"\#(apnsToken)","sound":{"name":false}}"#, path: "sound.name"),
    RuleCase(
        rule: "sound.volume is a number", passing: #"{"to":"\#(apnsToken)","sound":{"volume":1}}"#,
        failing: #"{"to":"\#(apnsToken)","sound":{"volume":"loud"}}"#, path: "sound.volume"),
    RuleCase(
        rule: "ttl is an integer", passing: #"{"to":"\#(apnsToken)","ttl":60,"body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","ttl":1.5}"#, path: "ttl"),
    RuleCase(
        rule: "expiration is an integer", passing: #"{"to":"\#(apnsToken)","expiration":1800000000,"body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","expiration":"tomorrow"}"#, path: "expiration"),
    RuleCase(
        rule: "badge is an integer", passing: #"{"to":"\#(apnsToken)","badge":2}"#,
        failing: #"{"to":"\#(apnsToken)","badge":2.5}"#, path: "badge"),

    // Enumerations.
    RuleCase(
        rule: "provider is apns, fcm or expo", passing: #"{"to":"\#(fcmToken)","provider":"fcm","body":"b"}"#,
        failing: #"{"to":"\#(fcmToken)","provider":"gcm"}"#, path: "provider"),
    RuleCase(
        rule: "priority is default, normal or high", passing: #"{"to":"\#(apnsToken)","priority":"normal","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","priority":"urgent"}"#, path: "priority"),
    RuleCase(
        rule: "interruptionLevel is one of four, case-sensitive",
        passing: #"{"to":"\#(apnsToken)","interruptionLevel":"time-sensitive","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","interruptionLevel":"Critical"}"#, path: "interruptionLevel"),
    RuleCase(
        rule: "pushType is an APNs push type", passing: #"{"to":"\#(apnsToken)","pushType":"voip","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","pushType":"alarm"}"#, path: "pushType"),
    RuleCase(
        rule: "apnsEnvironment is production or sandbox",
        passing: #"{"to":"\#(apnsToken)","apnsEnvironment":"sandbox","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","apnsEnvironment":"development"}"#, path: "apnsEnvironment"),

    // Ranges.
    RuleCase(
        rule: "volume is within 0 to 1", passing: #"{"to":"\#(apnsToken)","sound":{"critical":true,"volume":0}}"#,
        failing: #"{"to":"\#(apnsToken)","sound":{"critical":true,"volume":1.5}}"#, path: "sound.volume"),
    RuleCase(
        rule: "volume is not negative", passing: #"{"to":"\#(apnsToken)","sound":{"volume":1.0}}"#,
        failing: #"{"to":"\#(apnsToken)","sound":{"volume":-0.1}}"#, path: "sound.volume"),
    RuleCase(
        rule: "badge is 0 or more", passing: #"{"to":"\#(apnsToken)","badge":0}"#,
        failing: #"{"to":"\#(apnsToken)","badge":-1}"#, path: "badge"),
    RuleCase(
        rule: "ttl is 0 or more", passing: #"{"to":"\#(apnsToken)","ttl":0,"body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","ttl":-1}"#, path: "ttl"),
    RuleCase(
        rule: "expiration is 0 or more", passing: #"{"to":"\#(apnsToken)","expiration":0,"body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","expiration":-5}"#, path: "expiration"),
    RuleCase(
        rule: "collapseId is at most 64 bytes",
        passing: #"{"to":"\#(apnsToken)","collapseId":"\#(String(repeating: "c", count: 64))","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","collapseId":"\#(String(repeating: "c", count: 65))"}"#, path: "collapseId"),
    RuleCase(
        rule: "collapseId counts bytes, not characters",
        passing: #"{"to":"\#(apnsToken)","collapseId":"\#(String(repeating: "é", count: 32))","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","collapseId":"\#(String(repeating: "é", count: 33))"}"#, path: "collapseId"),
    RuleCase(
        rule: "image is an https URL",
        passing: #"{"to":"\#(apnsToken)","image":"https://cdn.example/a.png","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)","image":"http://cdn.example/a.png"}"#, path: "image"),

    // Data.
    RuleCase(
        rule: "data is an object", passing: #"{"to":"\#(apnsToken)","data":{"k":"v"}}"#,
        failing: #"{"to":"\#(apnsToken)","data":["k","v"]}"#, path: "data"),
    RuleCase(
        rule: "data.aps is reserved for APNs tokens", passing: #"{"to":"\#(fcmToken)","data":{"aps":"x"}}"#,
        failing: #"{"to":"\#(apnsToken)","data":{"aps":"x"}}"#, path: "data.aps"),
    RuleCase(
        rule: "data.from is reserved for FCM tokens", passing: #"{"to":"\#(apnsToken)","data":{"from":"x"}}"#,
        failing: #"{"to":"\#(fcmToken)","data":{"from":"x"}}"#, path: "data.from"),
    RuleCase(
        rule: "data keys starting google are reserved for FCM", passing: #"{"to":"\#(fcmToken)","data":{"g":"x"}}"#,
        failing: #"{"to":"\#(fcmToken)","data":{"google.sent_time":"x"}}"#, path: #"data["google.sent_time"]"#),
    RuleCase(
        rule: "image and data.image conflict for APNs",
        passing: #"{"to":"\#(apnsToken)","image":"https://a.example/i.png","data":{"img":"x"}}"#,
        failing: #"{"to":"\#(apnsToken)","image":"https://a.example/i.png","data":{"image":"x"}}"#, path: "data.image"),

    // Tokens.
    RuleCase(
        rule: "to is required", passing: #"{"to":"\#(apnsToken)","body":"b"}"#, failing: #"{"title":"x"}"#, path: "to"),
    RuleCase(
        rule: "to is a string or an array", passing: #"{"to":["\#(apnsToken)"],"body":"b"}"#,
        failing: #"{"to":42}"#, path: "to"),
    RuleCase(
        rule: "to holds strings", passing: #"{"to":["\#(apnsToken)","\#(expoToken)"],"body":"b"}"#,
        failing: #"{"to":["\#(apnsToken)",42]}"#, path: "to[1]"),
    RuleCase(
        rule: "to holds at least one token", passing: #"{"to":["\#(expoToken)"],"body":"b"}"#,
        failing: #"{"to":[]}"#, path: "to"),
    RuleCase(
        rule: "to holds at most 100 tokens",
        passing: #"{"to":[\#(Array(repeating: "\"\(expoToken)\"", count: 100).joined(separator: ","))],"body":"b"}"#,
        failing: #"{"to":[\#(Array(repeating: "\"\(expoToken)\"", count: 101).joined(separator: ","))]}"#, path: "to"),
    RuleCase(
        rule: "every token is recognised", passing: #"{"to":["\#(apnsToken)","\#(fcmToken)"],"body":"b"}"#,
        failing: #"{"to":["\#(apnsToken)","not-a-token"]}"#, path: "to[1]"),
    RuleCase(
        rule: "APNs tokens have even length", passing: #"{"to":"\#(apnsToken)","body":"b"}"#,
        failing: #"{"to":"\#(apnsToken)a"}"#, path: "to[0]"),
    RuleCase(
        rule: "a named provider must match the token", passing: #"{"to":"\#(expoToken)","provider":"expo","body":"b"}"#,
        failing: #"{"to":"\#(expoToken)","provider":"apns"}"#, path: "to[0]"),

    // Push types.
    RuleCase(
        rule: "a background push has no title",
        passing: #"{"to":"\#(apnsToken)","pushType":"background","data":{"k":"v"}}"#,
        failing: #"{"to":"\#(apnsToken)","pushType":"background","title":"x"}"#, path: "title"),
    RuleCase(
        rule: "a background push has no body", passing: #"{"to":"\#(apnsToken)","contentAvailable":true}"#,
        failing: #"{"to":"\#(apnsToken)","pushType":"background","body":"x"}"#, path: "body"),
    RuleCase(
        rule: "a background push has no sound",
        passing: #"{"to":"\#(apnsToken)","pushType":"background","sound":null,"data":{"k":"v"}}"#,
        failing: #"{"to":"\#(apnsToken)","pushType":"background","sound":"default"}"#, path: "sound"),
    RuleCase(
        rule: "a background push has no badge",
        passing: #"{"to":"\#(apnsToken)","pushType":"background","data":{"k":"v"}}"#,
        failing: #"{"to":"\#(apnsToken)","pushType":"background","badge":1}"#, path: "badge"),
    RuleCase(
        rule: "a critical alert is an alert",
        passing: #"{"to":"\#(apnsToken)","body":"x","isCriticalAlert":true,"pushType":"alert"}"#,
        failing: #"{"to":"\#(apnsToken)","body":"x","isCriticalAlert":true,"pushType":"voip"}"#, path: "pushType"),

    // Unknown fields.
    RuleCase(
        rule: "unknown fields are rejected by name",
        passing: #"{"to":"\#(apnsToken)","body":"x","isCriticalAlert":true}"#,
        failing: #"{"to":"\#(apnsToken)","body":"x","isCriticalAlrt":true}"#, path: "isCriticalAlrt"),
    RuleCase(
        rule: "unknown sound fields are rejected by name",
        passing: #"{"to":"\#(apnsToken)","sound":{"critical":true,"name":"a","volume":1}}"#,
        failing: #"{"to":"\#(apnsToken)","sound":{"critical":true,"loud":true}}"#, path: "sound.loud"),
]

@Suite struct ValidationRuleTests {
    @Test(arguments: ruleCases + payloadFieldRuleCases)
    func passingCasePasses(_ rule: RuleCase) throws {
        #expect(try issues(ofMessage: rule.passing) == [])
    }

    @Test(arguments: ruleCases + payloadFieldRuleCases)
    func failingCaseNamesThePath(_ rule: RuleCase) throws {
        let found = try issues(ofMessage: rule.failing)
        #expect(found.map(\.path) == [rule.path], "issues: \(found)")
        #expect(found.allSatisfy { !$0.message.isEmpty })
    }

    @Test func everyIssueOfAMessageIsReported() throws {
        let found = try issues(
            ofMessage: #"{"to":"\#(apnsToken)","badge":-1,"priority":"urgent","sound":{"volume":2},"titel":"x"}"#
        )
        #expect(Set(found.map(\.path)) == ["badge", "priority", "sound.volume", "titel"])
    }

    @Test func typoSuggestsTheIntendedField() throws {
        let found = try issues(ofMessage: #"{"to":"\#(apnsToken)","isCriticalAlrt":true}"#)
        #expect(found.first?.message.contains("did you mean 'isCriticalAlert'") == true)
    }

    @Test func unrecognisedTokenIsNeverEchoed() throws {
        let secret = "secret-token-abcdef-0123456789"
        let found = try issues(ofMessage: #"{"to":["\#(apnsToken)","\#(secret)"]}"#)
        let issue = try #require(found.first)
        #expect(issue.path == "to[1]")
        #expect(!issue.message.contains(secret))
        #expect(!issue.message.contains("secret-token"))
    }

    @Test func mismatchedProviderTokenIsNeverEchoed() throws {
        let found = try issues(ofMessage: #"{"to":"\#(apnsToken)","provider":"expo"}"#)
        #expect(found.map(\.path) == ["to[0]"])
        #expect(!found[0].message.contains(apnsToken))
    }

    @Test func nullReadsAsAbsentExceptForSound() throws {
        let push = try #require(
            try pushes(#"{"to":"\#(apnsToken)","title":null,"badge":null,"sound":null,"body":"b"}"#).first)
        #expect(push.message.title == nil)
        #expect(push.message.badge == nil)
        #expect(push.message.sound == .silent)
    }

    @Test func messageMustBeAnObject() throws {
        var found: [ValidationIssue] = []
        #expect(PushMessage.parse(.string("hi"), at: JSONPath("messages").appending(0), issues: &found) == nil)
        #expect(found.map(\.path) == ["messages[0]"])
    }
}
