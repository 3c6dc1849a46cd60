import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication

/// What a journal entry holds reads back as the notification and record it was made from.
@Suite struct JournalPayloadTests {
    static func push(_ json: String) throws -> [ResolvedPush] {
        var issues: [ValidationIssue] = []
        let message = try #require(
            PushMessage.parse(JSONValue.decode(Array(json.utf8)) ?? .null, at: .root, issues: &issues), "\(issues)")
        return message.pushes
    }

    @Test func aNotificationAndItsRecordReadBackAsTheyWere() throws {
        let tokens = [String(repeating: "ab", count: 32), String(repeating: "cd", count: 32)]
        var pushes = try Self.push(
            #"{"to":["\#(tokens[0])","\#(tokens[1])"],"title":"Incident #12","sound":{"critical":true,"name":"default","volume":1},"interruptionLevel":"critical","data":{"id":12},"ttl":600}"#
        )
        pushes[1].criticalChannel = "pager"
        pushes[1].apnsID = UUID(uuidString: "0196f3a2-7c1e-7d43-9a0b-8a3b8f1f2c11")
        let created = Date(timeIntervalSince1970: 1_800_000_000.25)
        let record = NotificationRecord(
            receipt: Receipt(
                id: "0196f3a2-7c1e-7d43-9a0b-8a3b8f1f2c11", tenantID: "tenant-1", keyID: "key-1", provider: .apns,
                tokenFingerprint: "fp", isCritical: true, status: .pending, createdAt: created, updatedAt: created,
                expiresAt: created.addingTimeInterval(72 * 3600)
            ),
            tenantName: "acme", requestID: "req-1", client: "203.0.113.7"
        )
        let payload = JournalPayload(push: pushes[1], record: record)
        let read = try JournalPayload(decoding: payload.encoded())
        // Only this notification's token is kept: the message reads back resolved for it alone.
        #expect(read.push.token == tokens[1])
        #expect(read.push.message.to == [tokens[1]])
        var message = pushes[1].message
        message.to = [tokens[1]]
        #expect(read.push.message == message)
        #expect(read.push.apnsID == pushes[1].apnsID)
        #expect(read.push.criticalChannel == "pager")
        #expect(read.push.isCritical)
        #expect(read.record == record)
        #expect(!payload.encoded().windowsContain(Array(tokens[0].utf8)), "another token of the message is not kept")
    }

    /// A notification's app, the message's or the tenant's default one the relay chose, survives the journal: a
    /// resumed notification goes with the credentials it was admitted for.
    @Test func theAppReadsBackWhetherTheMessageNamedItOrNot() throws {
        let token = String(repeating: "ab", count: 32)
        let created = Date(timeIntervalSince1970: 1_800_000_000)
        for (json, app) in [
            (#"{"to":"\#(token)","title":"named","app":"beta"}"#, "beta"),
            (#"{"to":"\#(token)","title":"tenant's default"}"#, "white-label"),
        ] {
            var push = try #require(try Self.push(json).first)
            push.app = app
            let record = NotificationRecord(
                receipt: Receipt(
                    id: "0196f3a2-7c1e-7d43-9a0b-8a3b8f1f2c12", tenantID: "tenant-1", keyID: "key-1", provider: .apns,
                    tokenFingerprint: "fp", isCritical: false, status: .pending, createdAt: created,
                    updatedAt: created, expiresAt: created.addingTimeInterval(3600), app: app
                ),
                tenantName: "acme"
            )
            let read = try JournalPayload(decoding: JournalPayload(push: push, record: record).encoded())
            #expect(read.push.app == app)
            #expect(read.record.receipt.app == app)
        }
    }

    /// A resumed Live Activity push concludes a receipt that still records its event.
    @Test func aLiveActivitysEventReadsBackOnItsReceipt() throws {
        let token = String(repeating: "ab", count: 32)
        let created = Date(timeIntervalSince1970: 1_800_000_000)
        for event in LiveActivityEvent.allCases {
            let activity =
                event == .start
                ? #"{"event":"start","attributesType":"IncidentAttributes","attributes":{"id":"12"},"contentState":{}}"#
                : #"{"event":"\#(event.rawValue)","contentState":{"status":"open"}}"#
            let title = event == .start ? #","title":"Incident #12""# : ""
            var push = try #require(
                try Self.push(#"{"to":"\#(token)"\#(title),"liveActivity":\#(activity)}"#).first)
            push.stampLiveActivity(at: created)
            let record = NotificationRecord(
                receipt: Receipt(
                    id: "0196f3a2-7c1e-7d43-9a0b-8a3b8f1f2c13", tenantID: "tenant-1", keyID: "key-1", provider: .apns,
                    tokenFingerprint: "fp", isCritical: false, status: .pending, createdAt: created,
                    updatedAt: created, expiresAt: created.addingTimeInterval(3600), liveActivityEvent: event
                ),
                tenantName: "acme"
            )
            let read = try JournalPayload(decoding: JournalPayload(push: push, record: record).encoded())
            #expect(read.record.receipt.liveActivityEvent == event)
            #expect(read.record == record)
        }
    }

    @Test func aDamagedPayloadIsAnErrorThatQuotesNothing() {
        #expect(throws: JournalPayloadError("not a JSON object")) { try JournalPayload(decoding: Array("[1]".utf8)) }
        #expect(throws: JournalPayloadError("unknown format")) { try JournalPayload(decoding: Array(#"{"v":9}"#.utf8)) }
        #expect(throws: JournalPayloadError("a field is missing")) {
            try JournalPayload(decoding: Array(#"{"v":1,"provider":"apns"}"#.utf8))
        }
    }
}
