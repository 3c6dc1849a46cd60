import Testing

@testable import RelayCore

@Suite struct CriticalityTests {
    @Test(arguments: [
        #""isCriticalAlert":true"#,
        #""interruptionLevel":"critical""#,
        #""sound":{"critical":true}"#,
        #""sound":{"critical":true,"name":"default","volume":1},"interruptionLevel":"critical""#,
        #""isCriticalAlert":false,"interruptionLevel":"critical""#,
        #""isCriticalAlert":false,"sound":{"critical":true}"#,
    ])
    func everySpellingIsCritical(_ fields: String) throws {
        let push = try #require(try pushes(#"{"to":"\#(TestTokens.apns)","body":"x",\#(fields)}"#).first)
        #expect(push.isCritical)
        #expect(push.message.isCritical)
        #expect(push.pushType == .alert)
    }

    @Test(arguments: [
        "",
        #","isCriticalAlert":false"#,
        #","interruptionLevel":"time-sensitive""#,
        #","sound":{"critical":false,"name":"x"}"#,
        #","sound":"critical""#,
        #","channelId":"oncall_critical""#,
    ])
    func otherMessagesAreNotCritical(_ fields: String) throws {
        let push = try #require(try pushes(#"{"to":"\#(TestTokens.apns)","body":"x"\#(fields)}"#).first)
        #expect(!push.isCritical)
    }

    @Test func criticalityIsTheSameForEveryTokenOfAMessage() throws {
        let all = try pushes(
            #"{"to":["\#(TestTokens.apns)","\#(TestTokens.fcm)","\#(TestTokens.expo)"],"body":"x","interruptionLevel":"critical"}"#
        )
        #expect(all.map(\.provider) == [.apns, .fcm, .expo])
        #expect(all.allSatisfy { $0.isCritical })
    }

    @Test func pushTypeDefaults() throws {
        #expect(try pushes(#"{"to":"\#(TestTokens.apns)","body":"x"}"#).first?.pushType == .alert)
        #expect(try pushes(#"{"to":"\#(TestTokens.apns)","contentAvailable":true}"#).first?.pushType == .background)
        #expect(
            try pushes(#"{"to":"\#(TestTokens.apns)","contentAvailable":true,"body":"x"}"#).first?.pushType == .alert)
        // Data alone shows nothing: a background update, not an alert (issue 35).
        #expect(try pushes(#"{"to":"\#(TestTokens.apns)","data":{"k":"v"}}"#).first?.pushType == .background)
        #expect(try pushes(#"{"to":"\#(TestTokens.apns)","badge":0}"#).first?.pushType == .alert)
        #expect(try pushes(#"{"to":"\#(TestTokens.apns)","pushType":"voip"}"#).first?.pushType == .voip)
    }
}
