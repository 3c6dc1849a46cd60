import Crypto
import Foundation
import HTTP2TestClient
import Testing

@testable import RelaySimulator

/// ``SimulatorRecorder``: `pushrelay simulate --record FILE`, one JSON line per notification answered.
@Suite struct SimulatorRecorderTests {
    @Test(.timeLimit(.minutes(1)))
    func everyNotificationAnsweredIsOneLineWithItsFingerprintAndNeverItsToken() async throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("simulator-record-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try SimulatorRecorder(path: path)
        let apnsToken = String(repeating: "ab", count: 32)
        let deadToken = "0410" + String(repeating: "cd", count: 30)
        let fcmToken = "fcm-token:APA91bRecorded"
        let expoTokens = ["ExponentPushToken[recordedOne]", "ExponentPushToken[0403otherSender]"]
        let start = Date()

        try await withSimulator { configuration in
            configuration.recorder = recorder
            configuration.recordsRequests = false
        } body: { simulator, client, credentials in
            let apns = try await sendAPNs(client, credentials, token: apnsToken)
            // Written as it happens, not at shutdown.
            #expect(try lines(path).count == 1)
            // The token exchange is no notification: no line.
            let accessToken = try await fcmAccessToken(client, simulator, credentials)
            let fcm = try await sendFCM(client, accessToken: accessToken, body: fcmMessage(token: fcmToken))
            let expo = try await sendExpo(
                client,
                body: #"[{"to":"\#(expoTokens[0])","title":"a"},{"to":"\#(expoTokens[1])","title":"b"}]"#)
            let dead = try await sendAPNs(client, credentials, token: deadToken)

            #expect(apns.status == 200)
            #expect(fcm.status == 200)
            #expect(expo.status == 200)
            #expect(dead.status == 410)
            #expect(simulator.received().isEmpty)  // recording is off; the file is written all the same
            let written = try lines(path)
            try #require(written.count == 5, "\(written)")
            let end = Date()
            for line in written {
                let time = try #require(line["time"]?.stringValue)
                #expect(time.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/) != nil, "\(time)")
                let date = try #require(
                    try? Date(time, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
                #expect(date >= start.addingTimeInterval(-0.001) && date <= end)
            }

            #expect(Set(written[0].keys ?? []) == ["time", "provider", "token", "id", "status"])
            #expect(written[0]["provider"] == "apns")
            #expect(written[0]["token"] == .string(fingerprint(apnsToken, apns: true)))
            #expect(written[0]["id"]?.stringValue == apns.header("apns-id"))
            #expect(written[0]["status"] == 200)

            #expect(Set(written[1].keys ?? []) == ["time", "provider", "token", "id", "status"])
            #expect(written[1]["provider"] == "fcm")
            #expect(written[1]["token"] == .string(fingerprint(fcmToken)))
            #expect(written[1]["id"] == (try json(fcm))["name"])
            #expect(written[1]["status"] == 200)

            let tickets = try #require(try json(expo)["data"]?.arrayValue)
            #expect(Set(written[2].keys ?? []) == ["time", "provider", "token", "id", "status"])
            #expect(written[2]["provider"] == "expo")
            #expect(written[2]["token"] == .string(fingerprint(expoTokens[0])))
            #expect(written[2]["id"] == tickets[0]["id"])
            #expect(written[2]["status"] == 200)
            #expect(Set(written[3].keys ?? []) == ["time", "provider", "token", "status", "reason"])
            #expect(written[3]["provider"] == "expo")
            #expect(written[3]["token"] == .string(fingerprint(expoTokens[1])))
            #expect(written[3]["status"] == 200)
            #expect(written[3]["reason"] == "MismatchSenderId")

            #expect(Set(written[4].keys ?? []) == ["time", "provider", "token", "id", "status", "reason"])
            #expect(written[4]["provider"] == "apns")
            #expect(written[4]["token"] == .string(fingerprint(deadToken, apns: true)))
            #expect(written[4]["id"]?.stringValue == dead.header("apns-id"))
            #expect(written[4]["status"] == 410)
            #expect(written[4]["reason"] == "Unregistered")
        }
        recorder.close()

        let text = try String(contentsOfFile: path, encoding: .utf8)
        // Members in the documented order (the parser above sorts them).
        for line in text.split(separator: "\n") {
            #expect(line.hasPrefix(#"{"time":""#) && line.contains(#"","provider":""#), "\(line)")
        }
        for token in [apnsToken, deadToken, fcmToken, "recordedOne", "0403otherSender"] {
            #expect(!text.contains(token), "\(token) in clear")
        }
        #expect(recorder.failedWrites == 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func refusedRequestsAndIgnoredPushesAreRecordedAndAReopenedFileIsAppendedTo() async throws {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("simulator-record-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"{"earlier":true}"#.utf8 + [0x0A]).write(to: URL(fileURLWithPath: path))
        let recorder = try SimulatorRecorder(path: path)
        let token = String(repeating: "0f", count: 32)

        try await withSimulator { configuration in
            configuration.recorder = recorder
            configuration.expo.accessToken = "right"
        } body: { simulator, client, credentials in
            let jwt = try apnsProviderToken(credentials)
            // Accepted by APNs, dropped by the device.
            let ignored = try await sendAPNs(
                client, credentials, token: token.uppercased(),
                headers: apnsHeaders(
                    authorization: "bearer \(jwt)", topic: "com.example.oncall.push-type.liveactivity",
                    pushType: "liveactivity"),
                body: Array(#"{"aps":{"event":"end","content-state":{}}}"#.utf8))
            // Refused whole: each recipient gets the request's status and error code.
            let unauthorized = try await sendExpo(
                client, body: #"{"to":["ExponentPushToken[a1]","ExponentPushToken[b2]"]}"#, accessToken: "wrong")
            let fcm = try await sendFCM(client, accessToken: "expired", body: fcmMessage(token: "fcm-refused"))

            #expect(ignored.status == 200)
            #expect(fcm.status == 401)
            #expect(simulator.received().count == 3)
            #expect(unauthorized.status == 401)
        }
        recorder.close()

        let written = try lines(path)
        try #require(written.count == 5, "\(written)")
        #expect(written[0] == ["earlier": true])
        // An APNs token is fingerprinted lowercased, whatever case it was sent in.
        #expect(written[1]["token"] == .string(fingerprint(token, apns: true)))
        #expect(written[1]["status"] == 200)
        #expect(written[1]["ignoredByDevice"] == "liveactivity without timestamp")
        #expect(written[1]["reason"] == nil)
        #expect(written[2]["token"] == .string(fingerprint("ExponentPushToken[a1]")))
        #expect(written[3]["token"] == .string(fingerprint("ExponentPushToken[b2]")))
        for line in written[2...3] {
            #expect(line["provider"] == "expo")
            #expect(line["status"] == 401)
            #expect(line["reason"] == "UNAUTHORIZED")
            #expect(line["id"] == nil)
        }
        #expect(written[4]["provider"] == "fcm")
        #expect(written[4]["status"] == 401)
        #expect(written[4]["reason"] == "UNAUTHENTICATED")
        #expect(written[4]["id"] == nil)
    }

    @Test func theFingerprintIsTheFirstHalfOfTheTokensSHA256AndLowercasesAPNsTokens() {
        // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
        #expect(SimulatorRecorder.tokenFingerprint("abc", provider: .fcm) == "ba7816bf8f01cfea414140de5dae2223")
        #expect(SimulatorRecorder.tokenFingerprint("ABC", provider: .apns) == "ba7816bf8f01cfea414140de5dae2223")
        #expect(SimulatorRecorder.tokenFingerprint("ABC", provider: .expoSend) != "ba7816bf8f01cfea414140de5dae2223")
    }

    @Test(.timeLimit(.minutes(1)))
    func aClosedRecorderDropsLinesAndAMissingDirectoryIsAnError() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString)")
        #expect(throws: SimulatorRecorder.OpenError.self) {
            try SimulatorRecorder(path: directory.appendingPathComponent("record.jsonl").path)
        }
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("simulator-record-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try SimulatorRecorder(path: path)
        recorder.close()
        recorder.close()
        recorder.write([SimulatorRecorder.Line(time: Date(), provider: .apns, token: "ab", status: 200)])
        #expect(try lines(path).isEmpty)
        #expect(recorder.failedWrites == 0)
    }
}

/// SHA-256 of the token's UTF-8 (an APNs token's lowercased), the first 16 bytes in hex: computed here, not by the
/// simulator.
private func fingerprint(_ token: String, apns: Bool = false) -> String {
    let text = apns ? token.lowercased() : token
    return SHA256.hash(data: Data(text.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
}

/// The file's lines, each parsed as JSON; fails when one is not a JSON object or the file does not end a line.
private func lines(_ path: String) throws -> [SimulatorJSON] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    guard !text.isEmpty else { return [] }
    #expect(text.hasSuffix("\n"))
    return try text.split(separator: "\n").map { line in
        try #require(SimulatorJSON(parsing: Array(line.utf8)), "not JSON: \(line)")
    }
}
