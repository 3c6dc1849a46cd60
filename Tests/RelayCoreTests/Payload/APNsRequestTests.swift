import Foundation
import Testing

@testable import RelayCore

@Suite struct APNsRequestTests {
    @Test func everySendGetsAFreshLowercaseAPNsID() throws {
        let push = try #require(try pushes(#"{"to":"\#(TestTokens.apns)","body":"x"}"#).first)
        let first = try APNsRequest(push: push, settings: testSettings, now: testNow, apnsID: UUID())
        let second = try APNsRequest(push: push, settings: testSettings, now: testNow, apnsID: UUID())
        #expect(first.apnsID != second.apnsID)
        #expect(first.apnsID == first.apnsID.lowercased())
        #expect(first.headers.last == HeaderField("apns-id", first.apnsID))
        #expect(first.apnsID.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
    }

    @Test(arguments: PushPriority.allCases)
    func backgroundPushesGoWithPriorityFive(_ priority: PushPriority) throws {
        let push = try #require(
            try pushes(#"{"to":"\#(TestTokens.apns)","contentAvailable":true,"priority":"\#(priority.rawValue)"}"#)
                .first
        )
        let request = try APNsRequest(push: push, settings: testSettings, now: testNow, apnsID: testAPNsID)
        #expect(request.headers.contains(HeaderField("apns-priority", "5")))
        #expect(request.headers.contains(HeaderField("apns-push-type", "background")))
    }

    @Test func defaultEnvironmentComesFromSettings() throws {
        let push = try #require(try pushes(#"{"to":"\#(TestTokens.apns)","body":"x"}"#).first)
        var settings = testSettings
        settings.apnsDefaultEnvironment = .sandbox
        #expect(
            try APNsRequest(push: push, settings: settings, now: testNow, apnsID: testAPNsID).environment == .sandbox)
    }

    @Test func customDataSitsBesideAps() throws {
        let push = try #require(
            try pushes(#"{"to":"\#(TestTokens.apns)","body":"x","data":{"incidentId":"12"}}"#).first)
        let request = try APNsRequest(push: push, settings: testSettings, now: testNow, apnsID: testAPNsID)
        let body = try #require(JSONValue.decode(request.body)?.objectValue)
        #expect(body["incidentId"] == .string("12"))
        #expect(body["aps"]?.objectValue?["incidentId"] == nil)
    }
}
