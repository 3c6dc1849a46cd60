import Foundation
import HTTPTypes
import HummingbirdCore
import RelayCore
import RelayProviders
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Every outcome a notification can end with, and what each reader of it sees: the ticket, the receipt, the usage
/// column, the audit entry, the metric's label, and each API's rendering (the native code, Expo's code, OneUptime's
/// status). One row per outcome; every rendering derives from the one typed outcome.
@Suite struct OutcomeTableTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var outcome: DeliveryOutcome
        /// The native code; `nil` when delivered.
        var code: String?
        var removeToken: Bool
        var retryAfter: Int?
        var column: UsageColumn
        /// The audit entry's `upstreamReason`.
        var upstreamReason: String?
        var metricsLabel: String
        var expoCode: String?
        var oneUptimeStatus: HTTPResponse.Status

        var testDescription: String { code ?? "delivered" }
    }

    static let rows: [Row] = [
        Row(
            outcome: .delivered(providerMessageID: "apns-1"), code: nil, removeToken: false, column: .delivered,
            metricsLabel: "delivered", expoCode: nil, oneUptimeStatus: .ok
        ),
        Row(
            outcome: .tokenInvalid(.deviceNotRegistered, reason: "Unregistered", since: nil),
            code: "DeviceNotRegistered",
            removeToken: true, column: .tokenInvalid, upstreamReason: "Unregistered", metricsLabel: "token_invalid",
            expoCode: "DeviceNotRegistered", oneUptimeStatus: .gone
        ),
        Row(
            outcome: .tokenInvalid(.invalidToken, reason: "BadDeviceToken", since: nil), code: "InvalidToken",
            removeToken: true, column: .tokenInvalid, upstreamReason: "BadDeviceToken", metricsLabel: "token_invalid",
            expoCode: "DeviceNotRegistered", oneUptimeStatus: .gone
        ),
        Row(
            outcome: .rejected(.messageTooBig, reason: "PayloadTooLarge"), code: "MessageTooBig", removeToken: false,
            column: .rejected, upstreamReason: "PayloadTooLarge", metricsLabel: "rejected", expoCode: "MessageTooBig",
            oneUptimeStatus: .unprocessableContent
        ),
        Row(
            outcome: .rejected(.invalidArgument, reason: "BadPriority"), code: "InvalidArgument", removeToken: false,
            column: .rejected, upstreamReason: "BadPriority", metricsLabel: "rejected", expoCode: "DeveloperError",
            oneUptimeStatus: .unprocessableContent
        ),
        Row(
            outcome: .rejected(.messageRateExceeded, reason: "TooManyRequests"), code: "MessageRateExceeded",
            removeToken: false, column: .rateLimited, upstreamReason: "TooManyRequests", metricsLabel: "rejected",
            expoCode: "MessageRateExceeded", oneUptimeStatus: .unprocessableContent
        ),
        Row(
            outcome: .configurationError(reason: "InvalidProviderToken"), code: "ProviderConfigurationError",
            removeToken: false, column: .rejected, upstreamReason: "InvalidProviderToken",
            metricsLabel: "configuration_error", expoCode: "InvalidCredentials", oneUptimeStatus: .unprocessableContent
        ),
        Row(
            outcome: .configurationError(reason: "SENDER_ID_MISMATCH"), code: "ProviderConfigurationError",
            removeToken: false, column: .rejected, upstreamReason: "SENDER_ID_MISMATCH",
            metricsLabel: "configuration_error", expoCode: "MismatchSenderId", oneUptimeStatus: .unprocessableContent
        ),
        Row(
            outcome: .unavailable(reason: "ServiceUnavailable", retryAfter: .seconds(30)), code: "ProviderUnavailable",
            removeToken: false, retryAfter: 30, column: .failed, upstreamReason: "ServiceUnavailable",
            metricsLabel: "unavailable", expoCode: "ProviderError", oneUptimeStatus: .internalServerError
        ),
        Row(
            outcome: .refused(.criticalAlertsNotAllowed, retryAfter: nil), code: "CriticalAlertsNotAllowed",
            removeToken: false, column: .rejected, metricsLabel: "refused", expoCode: "DeveloperError",
            oneUptimeStatus: .unprocessableContent
        ),
        Row(
            outcome: .refused(.providerNotConfigured, retryAfter: nil), code: "ProviderNotConfigured",
            removeToken: false, column: .rejected, metricsLabel: "refused", expoCode: "InvalidCredentials",
            oneUptimeStatus: .badRequest
        ),
        Row(
            outcome: .refused(.providerNotAllowed, retryAfter: nil), code: "ProviderNotConfigured",
            removeToken: false, column: .rejected, metricsLabel: "refused", expoCode: "InvalidCredentials",
            oneUptimeStatus: .badRequest
        ),
        Row(
            outcome: .refused(.appNotAllowed, retryAfter: nil), code: "AppNotAllowed", removeToken: false,
            column: .rejected, metricsLabel: "refused", expoCode: "DeveloperError",
            oneUptimeStatus: .unprocessableContent
        ),
        Row(
            outcome: .refused(.messageRateExceeded, retryAfter: .seconds(3)), code: "MessageRateExceeded",
            removeToken: false, retryAfter: 3, column: .rateLimited, metricsLabel: "refused",
            expoCode: "MessageRateExceeded", oneUptimeStatus: .unprocessableContent
        ),
        Row(
            outcome: .refused(.shuttingDown, retryAfter: nil), code: "ProviderUnavailable", removeToken: false,
            column: .failed, metricsLabel: "refused", expoCode: "ProviderError", oneUptimeStatus: .internalServerError
        ),
    ]

    static let createdAt = Date(timeIntervalSince1970: 1_750_000_000)
    static let record = NotificationRecord(
        receipt: Receipt(
            id: "r1", tenantID: "t1", keyID: "k1", provider: .apns, tokenFingerprint: "fp", isCritical: true,
            status: .pending, createdAt: createdAt, updatedAt: createdAt, expiresAt: createdAt.addingTimeInterval(3600)
        ),
        tenantName: "acme",
        requestID: "req-1",
        client: "192.0.2.7"
    )

    @Test(arguments: rows)
    func everyReaderSeesTheSameOutcome(row: Row) throws {
        let now = Self.createdAt.addingTimeInterval(2)
        let report = DeliveryReport(
            outcome: row.outcome, attempts: 2, upstreamStatus: 400, upstreamReason: row.upstreamReason,
            latency: .milliseconds(120)
        )
        var writes = RecordWrites()
        Self.record.record(.final(row.outcome), report: report, at: now, into: &writes)

        // The ticket.
        let ticket = Ticket(id: "r1", provider: .apns, state: Ticket.State(row.outcome))
        switch ticket.state {
        case .ok(let messageID):
            #expect(row.code == nil && messageID == "apns-1")
        case .error(let code, let message, let removeToken, let retryAfter):
            #expect(code.rawValue == row.code)
            #expect(message == row.outcome.message && !message.isEmpty)
            #expect(removeToken == row.removeToken && retryAfter == row.retryAfter)
        case .pending, .unrecorded:
            Issue.record("a final outcome never leaves a ticket pending or unrecorded")
        }

        // The receipt: the same code, message and token advice, written whole.
        let receipt = try #require(writes.batch.receipts.first)
        #expect(writes.batch.receipts.count == 1)
        #expect(receipt.status == (row.code == nil ? .ok : .error))
        #expect(receipt.errorCode == row.code && receipt.code?.rawValue == row.code)
        #expect(receipt.message == row.outcome.message && receipt.removeToken == row.removeToken)
        #expect(receipt.updatedAt == now && receipt.createdAt == Self.createdAt)

        // The usage: one notification, in its column, on the day of the outcome; and, being critical, one critical.
        let key = UsageKey(tenantID: "t1", date: now, provider: .apns)
        var counts = UsageCounts(column: row.column)
        counts.critical = 1
        #expect(writes.batch.usage == [key: counts])

        // The audit entry.
        let entry = try #require(writes.audit.first)
        #expect(writes.audit.count == 1)
        #expect(entry.outcome == row.code ?? "ok")
        #expect(entry.upstreamReason == row.upstreamReason)
        #expect(entry.attempts == 2 && entry.latencyMillis == 120 && entry.upstreamStatus == 400)
        #expect(entry.tenantID == "t1" && entry.keyID == "k1" && entry.requestID == "req-1")
        #expect(entry.client == "192.0.2.7" && entry.tokenFingerprint == "fp" && entry.critical == true)

        // The metric's label.
        #expect(Conclusion.final(row.outcome).metricsLabel == row.metricsLabel)

        // Each API's rendering.
        let nativeTicket = JSONValue.decode(Ticket.nativeJSON([ticket]))?.objectValue?["data"]?[0]
        if case .object(let native)? = nativeTicket, case .object(let details)? = native["details"] {
            #expect(details["error"] == .string(row.code ?? ""))
            #expect(details["removeToken"] == .bool(row.removeToken))
        } else {
            #expect(row.code == nil, "an error ticket has details")
        }
        if case .object(let expo) = ticket.expoJSON, case .object(let details)? = expo["details"] {
            #expect(details["error"].flatMap(\.stringValue) == row.expoCode)
        } else {
            #expect(row.expoCode == nil, "an error ticket has Expo details")
        }
        if case .object(let expoReceipt) = receipt.expoJSON, case .object(let details)? = expoReceipt["details"] {
            #expect(details["error"].flatMap(\.stringValue) == row.expoCode, "a stored receipt translates alike")
        } else {
            #expect(row.expoCode == nil)
        }
        #expect(OneUptimeAPI.answer([ticket], headers: [:]).status == row.oneUptimeStatus)
    }

    /// Expo's two steps: accepted (pending, counted as accepted on the day of the receipt's creation), then the
    /// receipt's outcome moves it, on that same day, and closes the receipt only if it is still pending.
    @Test func anExpoNotificationIsAcceptedThenConcludedByItsReceipt() throws {
        var accepted = RecordWrites()
        let later = Self.createdAt.addingTimeInterval(86_400 * 2)
        Self.record.record(
            Conclusion(DeliveryReport(outcome: .delivered(providerMessageID: "T1"), attempts: 1, receiptPending: true)),
            at: Self.createdAt,
            into: &accepted
        )
        let pending = try #require(accepted.batch.receipts.first)
        #expect(pending.status == .pending && pending.expoTicketID == "T1" && pending.providerMessageID == "T1")
        let createdKey = UsageKey(tenantID: "t1", date: Self.createdAt, provider: .apns)
        #expect(accepted.batch.usage == [createdKey: UsageCounts(accepted: 1, critical: 1)])
        #expect(accepted.audit.map(\.outcome) == ["ok"])
        #expect(Conclusion.acceptedByExpo(ticketID: "T1").metricsLabel == "accepted")
        #expect(Ticket.State(Conclusion.acceptedByExpo(ticketID: "T1")) == .ok(providerMessageID: "T1"))

        var concluded = RecordWrites()
        let dead = DeliveryOutcome.tokenInvalid(.deviceNotRegistered, reason: "DeviceNotRegistered", since: nil)
        Self.record.record(.expoReceipt(dead, ticketID: "T1"), at: later, into: &concluded)
        #expect(concluded.batch.receipts.isEmpty)
        #expect(concluded.batch.receiptCloses.map(\.errorCode) == ["DeviceNotRegistered"])
        // Moved from `accepted` to its final column; counted as critical once, when it was accepted.
        #expect(concluded.batch.usage == [createdKey: UsageCounts(tokenInvalid: 1, accepted: -1)])
        let entry = try #require(concluded.audit.first)
        #expect(entry.outcome == "DeviceNotRegistered" && entry.upstreamReason == "DeviceNotRegistered")
        #expect(entry.detail == "Expo receipt for ticket T1 (receipt r1)")
    }
}
