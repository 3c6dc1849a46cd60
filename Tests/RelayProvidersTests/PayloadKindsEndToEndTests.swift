import Foundation
import RelayCore
import RelaySimulator
import Testing

@testable import RelayProviders

/// Issue 35's payloads through the real senders and transport (HTTP/2 over TLS) against the provider simulator, which
/// applies APNs's and FCM's rules and records a push a device would ignore.
@Suite(.timeLimit(.minutes(1)))
struct PayloadKindsEndToEndTests {
    typealias Harness = ProviderSimulatorEndToEndTests.Harness

    static func push(_ json: String) throws -> ResolvedPush {
        var issues: [ValidationIssue] = []
        guard let object = JSONValue.decode(Array(json.utf8)),
            let message = PushMessage.parse(object, at: .root, issues: &issues), let push = message.pushes.first
        else {
            throw ValidationFailure(issues: issues)
        }
        return push
    }

    @Test func liveActivityStartUpdateAndEndAreAcceptedAndNotIgnored() async throws {
        let harness = try await Harness()
        let startToken = ProviderTestTokens.apns("1a01")
        let activityToken = ProviderTestTokens.apns("1a02")
        let messages = [
            (
                startToken,
                #"{"to":"\#(startToken)","title":"Incident #12","body":"Primary DB unreachable","liveActivity":{"event":"start","contentState":{"status":"open"},"attributesType":"IncidentAttributes","attributes":{"id":"12"},"inputPushToken":true}}"#
            ),
            (
                activityToken,
                #"{"to":"\#(activityToken)","priority":"normal","liveActivity":{"event":"update","contentState":{"status":"mitigating"},"staleDate":1900000000,"relevanceScore":50}}"#
            ),
            (
                activityToken,
                #"{"to":"\#(activityToken)","body":"Resolved","liveActivity":{"event":"end","contentState":{"status":"resolved"},"dismissalDate":1800000000}}"#
            ),
        ]
        for (token, json) in messages {
            var push = try Self.push(json)
            push.stampLiveActivity(at: harness.clock.now)
            let report = await harness.apns.send(push)
            #expect(report.outcome.shortDescription == "delivered", "\(report)")
            let arrived = try #require(harness.simulator.lastPayload(for: token))
            #expect(arrived.headers["apns-push-type"] == "liveactivity")
            #expect(arrived.headers["apns-topic"] == harness.credentials.apnsBundleID + ".push-type.liveactivity")
            #expect(arrived.json?["aps"]?["event"]?.stringValue == push.message.liveActivity?.event.rawValue)
            #expect(
                arrived.json?["aps"]?["timestamp"]?.numberValue
                    == Double(Int64(harness.clock.now.timeIntervalSince1970)))
            #expect(arrived.ignoredByDevice == nil)
        }
        #expect(harness.simulator.lastPayload(for: activityToken)?.json?["aps"]?["dismissal-date"] != nil)
        #expect(harness.simulator.ignoredByDevice().isEmpty)
        try await harness.close()
    }

    @Test func aBadgeClearArrivesWithoutASound() async throws {
        let harness = try await Harness()
        let token = ProviderTestTokens.apns("ba01")
        let report = await harness.apns.send(try Self.push(#"{"to":"\#(token)","badge":0}"#))
        #expect(report.outcome.shortDescription == "delivered", "\(report)")
        let arrived = try #require(harness.simulator.lastPayload(for: token))
        #expect(arrived.headers["apns-push-type"] == "alert")
        #expect(arrived.json?["aps"]?["badge"]?.numberValue == 0)
        #expect(arrived.json?["aps"]?["sound"] == nil)
        #expect(arrived.json?["aps"]?["alert"] == nil)
        try await harness.close()
    }

    @Test func aDataOnlyMessageReachesFCMWithoutANotification() async throws {
        let harness = try await Harness()
        let token = ProviderTestTokens.fcm("da01")
        let report = await harness.fcm.send(
            try Self.push(#"{"to":"\#(token)","data":{"sync":"inbox","count":3},"provider":"fcm"}"#))
        #expect(report.outcome.shortDescription == "delivered", "\(report)")
        let message = try #require(harness.simulator.lastPayload(for: token)?.json)
        #expect(message["notification"] == nil)
        #expect(message["android"]?["notification"] == nil)
        #expect(message["data"]?["count"]?.stringValue == "3")
        #expect(message["apns"]?["headers"]?["apns-push-type"]?.stringValue == "background")
        #expect(message["apns"]?["headers"]?["apns-priority"]?.stringValue == "5")

        let badgeToken = ProviderTestTokens.fcm("da02")
        let badge = await harness.fcm.send(try Self.push(#"{"to":"\#(badgeToken)","badge":2,"provider":"fcm"}"#))
        #expect(badge.outcome.shortDescription == "delivered", "\(badge)")
        let badgeMessage = try #require(harness.simulator.lastPayload(for: badgeToken)?.json)
        #expect(badgeMessage["notification"] == nil)
        #expect(badgeMessage["data"]?["badge"]?.stringValue == "2")
        #expect(badgeMessage["apns"]?["payload"]?["aps"]?["sound"] == nil)
        try await harness.close()
    }
}
