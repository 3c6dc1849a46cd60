import Testing

@testable import RelayCore

@Suite struct PushRequestTests {
    func failure(_ body: String) throws -> ValidationFailure {
        do {
            _ = try PushRequest.parse(Array(body.utf8))
        } catch {
            return error
        }
        Issue.record("expected a validation failure for \(body)")
        return ValidationFailure(issues: [])
    }

    @Test func validRequestKeepsNotificationsInOrder() throws {
        let body =
            #"{"messages":[{"to":["\#(apnsToken)","\#(expoToken)"],"body":"a"},{"to":"\#(fcmToken)","body":"b"}]}"#
        let request = try PushRequest.parse(Array(body.utf8))
        #expect(request.pushes.map(\.provider) == [.apns, .expo, .fcm])
        #expect(request.pushes.map(\.token) == [apnsToken, expoToken, fcmToken])
    }

    @Test func pathsNameTheMessageAndField() throws {
        let body =
            #"{"messages":[{"to":"\#(apnsToken)"},{"to":"\#(apnsToken)"},{"to":"\#(apnsToken)"},{"to":"\#(apnsToken)","sound":{"critical":true,"volume":7}}]}"#
        #expect(try failure(body).issues.map(\.path) == ["messages[3].sound.volume"])
    }

    @Test func issuesOfEveryMessageAreCollected() throws {
        let body = #"{"messages":[{"to":"bad"},{"to":"\#(apnsToken)","badge":-2}],"extra":1}"#
        #expect(Set(try failure(body).issues.map(\.path)) == ["extra", "messages[0].to[0]", "messages[1].badge"])
    }

    @Test func bodyThatIsNotJSONIsRefused() throws {
        let issues = try failure("{not json").issues
        #expect(issues.map(\.path) == [""])
        #expect(issues.first?.message.contains("not valid JSON") == true)
    }

    @Test func messagesAreRequired() throws {
        #expect(try failure(#"{}"#).issues.map(\.path) == ["messages"])
        #expect(try failure(#"{"messages":{}}"#).issues.map(\.path) == ["messages"])
        #expect(try failure(#"{"messages":[]}"#).issues.map(\.path) == ["messages"])
        #expect(try failure(#"[]"#).issues.map(\.path) == [""])
    }

    @Test func atMostOneHundredNotificationsPerRequest() throws {
        let fifty = Array(repeating: "\"\(expoToken)\"", count: 50).joined(separator: ",")
        let ok = #"{"messages":[{"to":[\#(fifty)]},{"to":[\#(fifty)]}]}"#
        #expect(try PushRequest.parse(Array(ok.utf8)).pushes.count == 100)
        let tooMany = #"{"messages":[{"to":[\#(fifty)]},{"to":[\#(fifty)]},{"to":"\#(expoToken)"}]}"#
        #expect(try failure(tooMany).issues.map(\.path) == ["messages"])
    }
}
