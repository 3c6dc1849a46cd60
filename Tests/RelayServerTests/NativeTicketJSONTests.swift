import RelayCore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// The native push route's answer is written directly; it must be the canonical encoding of the tickets' JSON, byte
/// for byte, for every ticket state.
@Suite struct NativeTicketJSONTests {
    static let tickets: [Ticket] = [
        Ticket(id: "r-1", provider: .apns, state: .ok(providerMessageID: "7b0c9d2e-0000-4000-8000-000000000001")),
        Ticket(id: "r-2", provider: .fcm, state: .ok(providerMessageID: nil)),
        Ticket(id: "r-3", provider: .expo, state: .pending),
        Ticket(id: "r-3u", provider: .apns, state: .unrecorded),
        Ticket(
            id: "r-4", provider: .apns,
            state: .error(code: .deviceNotRegistered, message: "gone", removeToken: true, retryAfter: nil)),
        Ticket(
            id: "r-5", provider: .fcm,
            state: .error(
                code: .messageRateExceeded, message: "too \"many\"\nper device \\ slow down", removeToken: false,
                retryAfter: 30)),
        Ticket(
            id: "r-\u{e9}\u{1F600}", provider: .expo,
            state: .error(
                code: .providerUnavailable, message: "", removeToken: false, retryAfter: 0)),
    ]

    @Test func everyStateIsWrittenAsItsCanonicalEncoding() {
        let expected = CanonicalJSON.encode(.object(["data": .array(Self.tickets.map(\.nativeJSON))]))
        #expect(Ticket.nativeJSON(Self.tickets) == expected)
        for ticket in Self.tickets {
            #expect(
                Ticket.nativeJSON([ticket]) == CanonicalJSON.encode(.object(["data": .array([ticket.nativeJSON])])),
                "\(ticket)")
        }
        #expect(Ticket.nativeJSON([]) == Array(#"{"data":[]}"#.utf8))
    }
}

extension Ticket {
    /// The reference form of a native ticket: the dictionary the route used to build and encode canonically.
    fileprivate var nativeJSON: JSONValue {
        var fields: [String: JSONValue] = ["id": .string(id), "provider": .string(provider.rawValue)]
        switch state {
        case .ok(let messageID):
            fields["status"] = .string("ok")
            if let messageID { fields["providerMessageId"] = .string(messageID) }
        case .pending:
            fields["status"] = .string("pending")
        case .unrecorded:
            fields["status"] = .string("error")
            fields["message"] = .string(Ticket.unrecordedMessage)
            fields["details"] = .object(["error": .string("StoreUnavailable"), "removeToken": .bool(false)])
        case .error(let code, let message, let removeToken, let retryAfter):
            fields["status"] = .string("error")
            fields["message"] = .string(message)
            var details: [String: JSONValue] = ["error": .string(code.rawValue), "removeToken": .bool(removeToken)]
            if let retryAfter { details["retryAfter"] = .int(Int64(retryAfter)) }
            fields["details"] = .object(details)
        }
        return .object(fields)
    }
}
