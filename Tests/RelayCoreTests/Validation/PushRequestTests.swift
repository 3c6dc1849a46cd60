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
            #"{"messages":[{"to":"\#(apnsToken)","body":"b"},{"to":"\#(apnsToken)","body":"b"},{"to":"\#(apnsToken)","body":"b"},{"to":"\#(apnsToken)","sound":{"critical":true,"volume":7}}]}"#
        #expect(try failure(body).issues.map(\.path) == ["messages[3].sound.volume"])
    }

    @Test func issuesOfEveryMessageAreCollected() throws {
        let body = #"{"messages":[{"to":"bad"},{"to":"\#(apnsToken)","badge":-2}],"extra":1}"#
        #expect(Set(try failure(body).issues.map(\.path)) == ["extra", "messages[0].to[0]", "messages[1].badge"])
    }

    @Test func aMessageMayNameOneOfTheRelaysApps() throws {
        let apps: Set<String> = ["default", "beta"]
        let body = #"{"messages":[{"to":"\#(apnsToken)","app":"beta","body":"b"},{"to":"\#(fcmToken)","body":"b"}]}"#
        let request = try PushRequest.parse(Array(body.utf8), apps: apps)
        #expect(request.pushes.map(\.app) == ["beta", "default"], "no app: the default until the tenant's is known")
        #expect(request.pushes.map(\.message.app) == ["beta", nil])
        // Written back as the native API reads it (the delivery journal keeps messages so).
        #expect(request.pushes[0].message.nativeJSON.objectValue?["app"] == .string("beta"))

        let unknown =
            #"{"messages":[{"to":"\#(apnsToken)","body":"b"},{"to":"\#(apnsToken)","app":"gamma","body":"b"}]}"#
        let issues = try #require(throws: ValidationFailure.self) {
            try PushRequest.parse(Array(unknown.utf8), apps: apps)
        }
        .issues
        #expect(issues.map(\.path) == ["messages[1].app"])
        #expect(issues.first?.message == "is not an app of this relay")

        let malformed = #"{"messages":[{"to":"\#(apnsToken)","app":"Beta!"},{"to":"\#(apnsToken)","app":7}]}"#
        #expect(Set(try failure(malformed).issues.map(\.path)) == ["messages[0].app", "messages[1].app"])
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
        let ok = #"{"messages":[{"to":[\#(fifty)],"body":"b"},{"to":[\#(fifty)],"body":"b"}]}"#
        #expect(try PushRequest.parse(Array(ok.utf8)).pushes.count == 100)
        let tooMany =
            #"{"messages":[{"to":[\#(fifty)],"body":"b"},{"to":[\#(fifty)],"body":"b"},{"to":"\#(expoToken)","body":"b"}]}"#
        #expect(try failure(tooMany).issues.map(\.path) == ["messages"])
    }
}

/// Issue 20: what a hostile body can make the relay say is bounded, however many problems it holds.
@Suite struct BoundedValidationTests {
    func refusal(of body: [UInt8]) -> ValidationFailure? {
        do {
            _ = try PushRequest.parse(body)
            return nil
        } catch {
            return error
        }
    }

    @Test func a100000BadMessagesListTheFirst100AndCountTheRest() throws {
        let body = Array(
            ("{\"messages\":[" + Array(repeating: "{}", count: 100_000).joined(separator: ",") + "]}").utf8)
        let failure = try #require(refusal(of: body))
        #expect(failure.issues.count == ValidationFailure.maximumIssues)
        #expect(failure.issues.first?.path == "messages[0].to")
        // Every message misses `to`, and the request as a whole holds too many: all counted, none lost.
        #expect(failure.issues.count + failure.omitted >= 100_000)
    }

    @Test func aMessageWith50000UnknownFieldsIsBoundedToo() throws {
        let fields = (0..<50_000).map { "\"f\($0)\":1" }.joined(separator: ",")
        let body = Array("{\"messages\":[{\"to\":\"\(apnsToken)\",\(fields)}]}".utf8)
        let failure = try #require(refusal(of: body))
        #expect(failure.issues.count == ValidationFailure.maximumIssues)
        #expect(failure.issues.count + failure.omitted >= 50_000)
        #expect(failure.issues.allSatisfy { $0.message.hasPrefix("unknown field") })
    }

    @Test func aLongKeyIsCutInThePathAndTheMessage() throws {
        let key = String(repeating: "k", count: 100_000)
        let failure = try #require(refusal(of: Array("{\"messages\":[{\"to\":\"\(apnsToken)\",\"\(key)\":1}]}".utf8)))
        let issue = try #require(failure.issues.first)
        #expect(issue.path.utf8.count <= ValidationFailure.maximumTextLength)
        #expect(issue.message.utf8.count <= ValidationFailure.maximumTextLength)
        #expect(issue.path.hasSuffix("…"))
    }

    @Test func textIsCutOnACharacterBoundary() {
        let failure = ValidationFailure(issues: [ValidationIssue(path: "", message: String(repeating: "é", count: 300))]
        )
        let message = failure.issues[0].message
        #expect(message.utf8.count <= ValidationFailure.maximumTextLength)
        #expect(message.dropLast().allSatisfy { $0 == "é" })
    }

    @Test func aFewProblemsAreListedWhole() throws {
        let failure = try #require(refusal(of: Array(#"{"messages":[{},{}]}"#.utf8)))
        #expect(failure.omitted == 0)
        #expect(failure.issues.map(\.path) == ["messages[0].to", "messages[1].to"])
    }
}
