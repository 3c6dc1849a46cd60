internal import Crypto
package import Foundation
internal import Synchronization

/// Writes one JSON line per notification a ``ProviderSimulator`` answers into a file, as it answers
/// (``ProviderSimulator/Configuration/recorder``; `pushrelay simulate --record FILE`): what the upstream received, for
/// a fault run or an operator to count arrivals per push without keeping them in memory.
///
/// ## Overview
///
/// ```json
/// {"time":"2026-11-28T15:42:51.123Z","provider":"apns","token":"3f…","id":"…","status":410,"reason":"Unregistered"}
/// ```
///
/// | Member | Value |
/// |---|---|
/// | `time` | When the answer was decided, ISO 8601 in UTC with milliseconds |
/// | `provider` | `apns`, `fcm` or `expo` |
/// | `token` | ``tokenFingerprint(_:provider:)`` of the device token, never the token itself; absent when the request named none (an FCM topic, an Expo body that is not messages) |
/// | `id` | APNs: the `apns-id` answered (the request's, or a new one); FCM: the message `name` of a 200; Expo: the ticket id of an `ok` ticket; absent otherwise |
/// | `status` | The HTTP status of the answer (Expo: of the whole request, 200 also for an error ticket) |
/// | `reason` | When the notification was refused: APNs `reason`, FCM `error.status`, Expo the ticket's `details.error` or the whole request's error `code` |
/// | `ignoredByDevice` | When set: why a device would drop a push APNs accepted (``SimulatedRequest/ignoredByDevice``) |
///
/// Lines are written for APNs pushes, FCM sends and Expo sends (one per message recipient, in request order; a
/// request refused whole gives each recipient its line with the request's status), not for the OAuth token endpoint,
/// Expo receipts or `/simulator/last-payload`; an injected fault that gives no answer (a reset, a stall, a dropped
/// connection) writes none. The file is opened for appending and created when missing (mode 0644), so a restarted
/// simulator adds to it, and several simulators may share one recorder.
///
/// ### Implementation
/// Each request's lines go to the file in one `write(2)` (repeated only for what a short write left) under a `Mutex`
/// of the recorder's own, after the simulator's state lock is released: nothing is buffered in the process, so a killed
/// simulator leaves whole lines, and memory does not grow with the number of pushes. Lines are in the order written,
/// which can differ from the order answers were decided by concurrent requests; `time` is the decision's.
package final class SimulatorRecorder: Sendable {
    /// The file, as given.
    package let path: String
    /// The open descriptor, `-1` once closed.
    private let descriptor: Mutex<Int32>
    private let failures = Atomic<Int>(0)

    /// Opens (creating when missing) `path` for appending.
    ///
    /// - Throws: ``OpenError`` when the file cannot be opened.
    package init(path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw OpenError(path: path, errorNumber: errno)
        }
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    deinit {
        self.close()
    }

    /// The file could not be opened.
    package struct OpenError: Error, CustomStringConvertible {
        package var path: String
        package var errorNumber: Int32

        package var description: String {
            "cannot open \(self.path) for recording: \(String(cString: strerror(self.errorNumber)))"
        }
    }

    /// How many requests' lines could not be written (a full disk…) since the recorder was opened; they are lost,
    /// and the simulator answers as usual.
    package var failedWrites: Int {
        self.failures.load(ordering: .relaxed)
    }

    /// Closes the file; later lines are dropped (not counted as failures). Calling it again does nothing.
    package func close() {
        self.descriptor.withLock { descriptor in
            if descriptor >= 0 {
                _ = Foundation.close(descriptor)
                descriptor = -1
            }
        }
    }

    /// The fingerprint a line shows for a device token: the SHA-256 of the token's UTF-8 bytes, its first 16 bytes
    /// as 32 lowercase hex digits. An APNs token is lowercased first (Apple compares its hex case-insensitively, and
    /// the relay sends it lowercased); FCM and Expo tokens are hashed exactly as sent, an Expo token whole
    /// (`ExponentPushToken[…]`).
    ///
    /// To find a token's lines, compute the same: `printf %s "$token" | sha256sum | cut -c1-32` (lowercase an APNs
    /// token first).
    package static func tokenFingerprint(_ token: String, provider: SimulatedProvider) -> String {
        let text = provider == .apns ? token.lowercased() : token
        let digest = SHA256.hash(data: Array(text.utf8))
        var hex = ""
        hex.reserveCapacity(32)
        for byte in digest.prefix(16) {
            hex += String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
        }
        return hex
    }

    /// One line: what the simulator received for one notification and what it answered.
    package struct Line: Sendable, Hashable {
        package var time: Date
        /// ``SimulatedProvider/apns``, ``SimulatedProvider/fcm`` or ``SimulatedProvider/expoSend`` (written `expo`).
        package var provider: SimulatedProvider
        /// ``SimulatorRecorder/tokenFingerprint(_:provider:)`` of the device token.
        package var token: String?
        package var id: String?
        package var status: Int
        package var reason: String?
        package var ignoredByDevice: String?

        /// A line for `token` (fingerprinted here: the token itself is not kept).
        package init(
            time: Date,
            provider: SimulatedProvider,
            token: String?,
            id: String? = nil,
            status: Int,
            reason: String? = nil,
            ignoredByDevice: String? = nil
        ) {
            self.time = time
            self.provider = provider
            self.token = token.map { SimulatorRecorder.tokenFingerprint($0, provider: provider) }
            self.id = id
            self.status = status
            self.reason = reason
            self.ignoredByDevice = ignoredByDevice
        }

        /// The JSON object, members in the documented order, absent ones left out.
        package var json: SimulatorJSON {
            var members: [(key: String, value: SimulatorJSON)] = [
                ("time", .string(self.time.formatted(timeStyle))),
                ("provider", .string(self.provider == .expoSend ? "expo" : self.provider.rawValue)),
            ]
            if let token = self.token { members.append(("token", .string(token))) }
            if let id = self.id { members.append(("id", .string(id))) }
            members.append(("status", .number(Double(self.status))))
            if let reason = self.reason { members.append(("reason", .string(reason))) }
            if let ignoredByDevice = self.ignoredByDevice {
                members.append(("ignoredByDevice", .string(ignoredByDevice)))
            }
            return .object(members)
        }
    }

    /// Appends `lines`, one JSON object a line, in one write.
    func write(_ lines: [Line]) {
        guard !lines.isEmpty else {
            return
        }
        var text = ""
        for line in lines {
            text += line.json.text
            text += "\n"
        }
        let bytes = Array(text.utf8)
        let written = self.descriptor.withLock { descriptor -> Bool in
            guard descriptor >= 0 else {
                return true
            }
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { buffer in
                    Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
        if !written {
            self.failures.add(1, ordering: .relaxed)
        }
    }
}

/// `2026-11-28T15:42:51.123Z`.
private let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

extension SimulatorRecorder.Line {
    /// The line of an APNs push: `reason` from an error's body, `ignoredByDevice` as recorded.
    static func apns(
        _ inspection: APNsEndpoint.Inspection,
        response: HTTP2TestResponse,
        ignoredByDevice: String?,
        time: Date
    ) -> [SimulatorRecorder.Line] {
        let apnsID = response.headers.first { $0.name == "apns-id" }?.value ?? inspection.apnsID
        let reason = response.status == 200 ? nil : SimulatorJSON(parsing: response.body)?["reason"]?.stringValue
        return [
            SimulatorRecorder.Line(
                time: time, provider: .apns, token: inspection.deviceToken.isEmpty ? nil : inspection.deviceToken,
                id: apnsID, status: response.status, reason: reason, ignoredByDevice: ignoredByDevice)
        ]
    }

    /// The line of an FCM send: the message `name` of a 200, `error.status` of an error.
    static func fcm(_ inspection: FCMEndpoint.Inspection, response: HTTP2TestResponse, time: Date)
        -> [SimulatorRecorder.Line]
    {
        let body = SimulatorJSON(parsing: response.body)
        let ok = response.status == 200
        return [
            SimulatorRecorder.Line(
                time: time, provider: .fcm, token: inspection.deviceToken,
                id: ok ? body?["name"]?.stringValue : nil, status: response.status,
                reason: ok ? nil : body?["error"]?["status"]?.stringValue)
        ]
    }

    /// One line per recipient of an Expo send, in request order: its ticket's id or error, or the whole request's
    /// error `code`; a request refused before its recipients were known gives one line without a token.
    static func expo(_ inspection: ExpoEndpoint.SendInspection, response: HTTP2TestResponse, time: Date)
        -> [SimulatorRecorder.Line]
    {
        let body = SimulatorJSON(parsing: response.body)
        let recipients = inspection.recipients.map { Optional($0.to) }
        guard response.status == 200, let data = body?["data"] else {
            let code = body?["errors"]?[0]?["code"]?.stringValue
            return (recipients.isEmpty ? [nil] : recipients).map { to in
                SimulatorRecorder.Line(
                    time: time, provider: .expoSend, token: to, status: response.status, reason: code)
            }
        }
        let tickets = data.arrayValue ?? [data]
        return recipients.enumerated().map { index, to in
            let ticket = tickets.indices.contains(index) ? tickets[index] : nil
            let ok = ticket?["status"]?.stringValue == "ok"
            return SimulatorRecorder.Line(
                time: time, provider: .expoSend, token: to, id: ok ? ticket?["id"]?.stringValue : nil,
                status: response.status, reason: ok ? nil : ticket?["details"]?["error"]?.stringValue)
        }
    }
}
