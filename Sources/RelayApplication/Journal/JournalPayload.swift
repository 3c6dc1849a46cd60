import Foundation
package import RelayCore
import RelayStore

/// What a delivery journal entry holds once opened: everything needed to send the notification again and to
/// conclude its record as the relay that admitted it would have. Sealed (``JournalKey``) before it reaches the
/// store; this type only turns it into bytes and back.
///
/// The message is kept as the native API writes it (``PushMessage/nativeJSON``), with only this notification's token
/// in `to`, and read back through ``PushMessage/parse(_:at:issues:)``: a resumed notification passes the same rules
/// as a new one.
package struct JournalPayload: Sendable, Equatable {
    package var push: ResolvedPush
    /// Its record, with the receipt as admitted (pending).
    package var record: NotificationRecord

    package init(push: ResolvedPush, record: NotificationRecord) {
        self.push = push
        self.record = record
    }

    private static let formatVersion: Int64 = 1

    /// The payload as compact JSON.
    package func encoded() -> [UInt8] {
        var message = push.message
        message.to = [push.token]
        let receipt = record.receipt
        var fields: [String: JSONValue] = [
            "v": .int(Self.formatVersion),
            "message": message.nativeJSON,
            "provider": .string(push.provider.rawValue),
            "receipt": .object([
                "id": .string(receipt.id),
                "tenantID": .string(receipt.tenantID),
                "keyID": .string(receipt.keyID),
                "tokenFingerprint": .string(receipt.tokenFingerprint),
                "critical": .bool(receipt.isCritical),
                "createdAt": .double(receipt.createdAt.timeIntervalSince1970),
                "expiresAt": .double(receipt.expiresAt.timeIntervalSince1970),
            ]),
            "tenantName": .string(record.tenantName),
            "app": .string(push.app),
        ]
        if let channel = push.criticalChannel { fields["criticalChannel"] = .string(channel) }
        if let apnsID = push.apnsID { fields["apnsID"] = .string(apnsID.lowercaseString) }
        if let requestID = record.requestID { fields["requestID"] = .string(requestID) }
        if let client = record.client { fields["client"] = .string(client) }
        return JSONValue.object(fields).encodedBytes()
    }

    /// Reads what ``encoded()`` wrote.
    ///
    /// - Throws: ``JournalPayloadError`` naming what is missing or no longer valid.
    package init(decoding bytes: [UInt8]) throws(JournalPayloadError) {
        guard case .object(let fields)? = JSONValue.decode(bytes) else {
            throw JournalPayloadError("not a JSON object")
        }
        guard fields["v"]?.integerValue == Self.formatVersion else { throw JournalPayloadError("unknown format") }
        guard case .object(let stored)? = fields["receipt"], let id = stored["id"]?.stringValue,
            let tenantID = stored["tenantID"]?.stringValue, let keyID = stored["keyID"]?.stringValue,
            let fingerprint = stored["tokenFingerprint"]?.stringValue,
            case .bool(let critical)? = stored["critical"], let created = stored["createdAt"]?.numberValue,
            let expires = stored["expiresAt"]?.numberValue, let tenantName = fields["tenantName"]?.stringValue,
            let providerName = fields["provider"]?.stringValue, let provider = Provider(rawValue: providerName),
            let json = fields["message"]
        else { throw JournalPayloadError("a field is missing") }
        var issues: [ValidationIssue] = []
        guard let validated = PushMessage.parse(json, at: .root, issues: &issues), var push = validated.pushes.first,
            validated.pushes.count == 1, push.provider == provider
        else {
            throw JournalPayloadError(
                "the message no longer passes validation: \(issues.map(\.description).joined(separator: "; "))")
        }
        push.criticalChannel = fields["criticalChannel"]?.stringValue
        // Entries written before there were several apps name none: they were the default app's.
        push.app = fields["app"]?.stringValue ?? AppName.default
        push.apnsID = fields["apnsID"]?.stringValue.flatMap(UUID.init(text:))
        let createdAt = Date(timeIntervalSince1970: created)
        self.push = push
        record = NotificationRecord(
            receipt: Receipt(
                id: id,
                tenantID: tenantID,
                keyID: keyID,
                provider: provider,
                tokenFingerprint: fingerprint,
                isCritical: critical,
                status: .pending,
                createdAt: createdAt,
                updatedAt: createdAt,
                expiresAt: Date(timeIntervalSince1970: expires),
                app: push.app,
                liveActivityEvent: push.message.liveActivity?.event
            ),
            tenantName: tenantName,
            requestID: fields["requestID"]?.stringValue,
            client: fields["client"]?.stringValue
        )
    }
}

/// Why an opened journal entry could not be read; never quotes its content.
package struct JournalPayloadError: Error, Sendable, Equatable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
