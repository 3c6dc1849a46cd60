import Foundation
import HTTP2TestClient
import Testing

@testable import RelaySimulator

/// Pushes APNs accepts but a device ignores: answered 200, recorded with the reason.
@Suite struct APNsDeviceRulesTests {
    struct DeviceCase: Sendable, CustomTestStringConvertible {
        var pushType: String
        var aps: String
        /// `nil`: the device shows it.
        var ignored: String?
        var testDescription: String { "\(self.pushType) \(self.aps) → \(self.ignored ?? "shown")" }
    }

    static let start =
        #""event":"start","timestamp":1700000000,"content-state":{"level":2},"attributes-type":"IncidentAttributes","#
        + #""attributes":{"id":"12"},"alert":{"title":"Incident #12","body":"Started"}"#

    @Test(
        arguments: [
            DeviceCase(pushType: "liveactivity", aps: start, ignored: nil),
            DeviceCase(
                pushType: "liveactivity", aps: #""event":"update","timestamp":1700000000,"content-state":{"level":3}"#,
                ignored: nil),
            DeviceCase(pushType: "liveactivity", aps: #""event":"end","timestamp":1700000000.5"#, ignored: nil),
            DeviceCase(
                pushType: "liveactivity",
                aps: #""event":"end","timestamp":1700000000,"content-state":{},"dismissal-date":1700000100"#,
                ignored: nil),
            DeviceCase(
                pushType: "liveactivity", aps: #""event":"update","content-state":{"level":3}"#,
                ignored: "liveactivity without timestamp"),
            DeviceCase(
                pushType: "liveactivity", aps: #""event":"update","timestamp":"1700000000","content-state":{}"#,
                ignored: "liveactivity with timestamp not a number"),
            DeviceCase(
                pushType: "liveactivity", aps: #""timestamp":1700000000,"content-state":{}"#,
                ignored: "liveactivity without event"),
            DeviceCase(
                pushType: "liveactivity", aps: #""event":1,"timestamp":1700000000,"content-state":{}"#,
                ignored: "liveactivity with event not a string"),
            DeviceCase(
                pushType: "liveactivity", aps: #""event":"pause","timestamp":1700000000,"content-state":{}"#,
                ignored: #"liveactivity with event "pause", not start, update or end"#),
            DeviceCase(
                pushType: "liveactivity", aps: #""event":"update","timestamp":1700000000"#,
                ignored: "liveactivity update without content-state"),
            DeviceCase(
                pushType: "liveactivity", aps: #""event":"update","timestamp":1700000000,"content-state":"3""#,
                ignored: "liveactivity update with content-state not an object"),
            DeviceCase(
                pushType: "liveactivity", aps: #""event":"end","timestamp":1700000000,"content-state":[]"#,
                ignored: "liveactivity end with content-state not an object"),
            DeviceCase(
                pushType: "liveactivity",
                aps: #""event":"start","timestamp":1700000000,"attributes-type":"A","attributes":{}"#,
                ignored: "liveactivity start without content-state"),
            DeviceCase(
                pushType: "liveactivity",
                aps: #""event":"start","timestamp":1700000000,"content-state":{},"attributes":{}"#,
                ignored: "liveactivity start without attributes-type"),
            DeviceCase(
                pushType: "liveactivity",
                aps: #""event":"start","timestamp":1700000000,"content-state":{},"attributes-type":"A""#,
                ignored: "liveactivity start without attributes"),
            DeviceCase(
                pushType: "liveactivity",
                aps: #""event":"start","timestamp":1700000000,"content-state":{},"attributes-type":"A","attributes":7"#,
                ignored: "liveactivity start with attributes not an object"),
            // Only Live Activity pushes have these rules; an alert with content-available and nothing visible is fine.
            DeviceCase(pushType: "alert", aps: #""content-available":1"#, ignored: nil),
            DeviceCase(pushType: "alert", aps: #""event":"update""#, ignored: nil),
            DeviceCase(pushType: "background", aps: #""content-available":1"#, ignored: nil),
        ]
    )
    func liveActivityRules(_ row: DeviceCase) throws {
        let payload = try #require(SimulatorJSON(parsing: Array(#"{"aps":{\#(row.aps)}}"#.utf8)))
        #expect(APNsEndpoint.deviceProblem(pushType: row.pushType, payload: payload) == row.ignored)
    }

    /// The headers of a Live Activity push.
    static func liveActivityHeaders(_ jwt: String, priority: String = "10") -> [(String, String)] {
        apnsHeaders(
            authorization: "bearer \(jwt)", topic: "com.example.oncall.push-type.liveactivity",
            pushType: "liveactivity", extra: [("apns-priority", priority)])
    }

    @Test(.timeLimit(.minutes(1)))
    func ignoredPushesAreAcceptedAndRecordedWithTheirReason() async throws {
        try await withSimulator { simulator, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            let headers = Self.liveActivityHeaders(jwt)
            let withoutTimestamp = try await sendAPNs(
                client, credentials, headers: headers,
                body: Array(#"{"aps":{"event":"update","content-state":{"level":3}}}"#.utf8))
            let complete = try await sendAPNs(
                client, credentials, headers: headers, body: Array(#"{"aps":{\#(Self.start)}}"#.utf8))

            #expect(withoutTimestamp.status == 200)
            #expect(withoutTimestamp.header("apns-id") != nil)
            #expect(complete.status == 200)
            let received = simulator.received(.apns)
            #expect(received.map(\.ignoredByDevice) == ["liveactivity without timestamp", nil])
            let ignored = simulator.ignoredByDevice()
            #expect(ignored.count == 1)
            #expect(ignored.first?.ignoredByDevice == "liveactivity without timestamp")
            #expect(ignored.first?.streamID == received.first?.streamID)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func ignoredPushesAreKeptWhenRecordingIsOff() async throws {
        try await withSimulator { configuration in
            configuration.recordsRequests = false
        } body: { simulator, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            let response = try await sendAPNs(
                client, credentials, headers: Self.liveActivityHeaders(jwt),
                body: Array(#"{"aps":{"event":"start","timestamp":1700000000,"content-state":{}}}"#.utf8))
            #expect(response.status == 200)
            #expect(simulator.received().isEmpty)
            #expect(
                simulator.ignoredByDevice().map(\.ignoredByDevice) == ["liveactivity start without attributes-type"])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func refusedPushesAreNotIgnoredByTheDevice() async throws {
        try await withSimulator { simulator, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            let body = Array(#"{"aps":{"event":"update","content-state":{}}}"#.utf8)
            let badPriority = try await sendAPNs(
                client, credentials, headers: Self.liveActivityHeaders(jwt, priority: "7"), body: body)
            let dead = try await sendAPNs(
                client, credentials, token: "0410" + String(repeating: "ab", count: 30),
                headers: Self.liveActivityHeaders(jwt), body: body)

            #expect(badPriority.status == 400)
            #expect(try json(badPriority)["reason"] == "BadPriority")
            #expect(dead.status == 410)
            #expect(simulator.received(.apns).map(\.ignoredByDevice) == [nil, nil])
            #expect(simulator.ignoredByDevice().isEmpty)
        }
    }
}
