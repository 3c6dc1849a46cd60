import Foundation
import HTTP2TestClient
import Testing

@testable import RelaySimulator

@Suite struct ExpoEndpointTests {
    @Test(.timeLimit(.minutes(1)))
    func singleMessageGetsABareTicket() async throws {
        try await withSimulator { simulator, client, _ in
            let response = try await sendExpo(
                client, body: #"{"to":"ExponentPushToken[abc123]","title":"Incident #12","priority":"high"}"#)
            let ticket = try #require(try json(response)["data"])
            #expect(response.status == 200)
            #expect(ticket["status"] == "ok")
            #expect(UUID(uuidString: ticket["id"]?.stringValue ?? "") != nil)
            #expect(simulator.received(.expoSend).count == 1)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func arrayGetsOneTicketPerRecipientInOrder() async throws {
        try await withSimulator { _, client, _ in
            let body = """
                [{"to":["ExponentPushToken[first]","not-a-token","ExpoPushToken[0410dead]"],"body":"a"},
                 {"to":"ExponentPushToken[last]","data":{"incidentId":"12"}}]
                """
            let response = try await sendExpo(client, body: body)
            let tickets = try #require(try json(response)["data"]?.arrayValue)
            #expect(response.status == 200)
            #expect(tickets.count == 4)
            #expect(tickets.map { $0["status"]?.stringValue } == ["ok", "error", "error", "ok"])
            #expect(tickets[1]["details"]?["error"] == "DeviceNotRegistered")
            #expect(tickets[1]["message"]?.stringValue?.contains("not-a-token") == true)
            #expect(tickets[2]["details"]?["error"] == "DeviceNotRegistered")
            #expect(tickets[0]["id"] != nil && tickets[0]["id"] != tickets[3]["id"])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func singleMessageWithSeveralRecipientsGetsAnArray() async throws {
        try await withSimulator { _, client, _ in
            let response = try await sendExpo(client, body: #"{"to":["ExponentPushToken[a]","ExponentPushToken[b]"]}"#)
            #expect(try json(response)["data"]?.arrayValue?.count == 2)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func receiptsAnswerKnownTicketsOnly() async throws {
        try await withSimulator { simulator, client, _ in
            let sent = try await sendExpo(
                client,
                body:
                    #"[{"to":"ExponentPushToken[fine]"},{"to":"ExponentPushToken[0610receipt]"},{"to":"ExponentPushToken[0407creds]"}]"#
            )
            let tickets = try #require(try json(sent)["data"]?.arrayValue)
            #expect(tickets.map { $0["status"]?.stringValue } == ["ok", "ok", "ok"])
            let okID = try #require(tickets[0]["id"]?.stringValue)
            let deadID = try #require(tickets[1]["id"]?.stringValue)
            let credentialsID = try #require(tickets[2]["id"]?.stringValue)

            let response = try await sendExpo(
                client, body: #"{"ids":["\#(okID)","\#(deadID)","\#(credentialsID)","unknown-id"]}"#,
                path: "/--/api/v2/push/getReceipts")
            let receipts = try #require(try json(response)["data"])
            #expect(response.status == 200)
            #expect(Set(receipts.keys ?? []) == [okID, deadID, credentialsID])
            #expect(receipts[credentialsID]?["details"]?["error"] == "InvalidCredentials")
            #expect(receipts[okID] == ["status": "ok"])
            #expect(receipts[deadID]?["status"] == "error")
            #expect(receipts[deadID]?["details"]?["error"] == "DeviceNotRegistered")
            #expect(simulator.received(.expoReceipts).map(\.status) == [200])
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func atMostOneHundredRecipientsAndOneThousandReceipts() async throws {
        try await withSimulator { _, client, _ in
            let hundred = (0..<100).map { #""ExponentPushToken[t\#($0)]""# }.joined(separator: ",")
            let atLimit = try await sendExpo(client, body: #"[{"to":[\#(hundred)]}]"#)
            let over = try await sendExpo(client, body: #"[{"to":[\#(hundred)]},{"to":"ExponentPushToken[x]"}]"#)
            let ids = (0...1000).map { #""id\#($0)""# }.joined(separator: ",")
            let tooManyIDs = try await sendExpo(
                client, body: #"{"ids":[\#(ids)]}"#, path: "/--/api/v2/push/getReceipts")

            #expect(atLimit.status == 200)
            #expect(try json(atLimit)["data"]?.arrayValue?.count == 100)
            #expect(over.status == 400)
            #expect(try json(over)["errors"]?[0]?["code"] == "PUSH_TOO_MANY_NOTIFICATIONS")
            #expect(tooManyIDs.status == 400)
            #expect(try json(tooManyIDs)["errors"]?[0]?["code"] == "PUSH_TOO_MANY_RECEIPTS")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func accessTokenIsRequiredWhenConfigured() async throws {
        try await withSimulator { configuration in
            configuration.expo.accessToken = "expo-secret"
        } body: { _, client, _ in
            let message = #"{"to":"ExponentPushToken[abc]"}"#
            let missing = try await sendExpo(client, body: message)
            let wrong = try await sendExpo(client, body: message, accessToken: "guess")
            let right = try await sendExpo(client, body: message, accessToken: "expo-secret")
            let receipts = try await sendExpo(client, body: #"{"ids":[]}"#, path: "/--/api/v2/push/getReceipts")

            for response in [missing, wrong, receipts] {
                #expect(response.status == 401)
                #expect(try json(response)["errors"]?[0]?["code"] == "UNAUTHORIZED")
            }
            #expect(right.status == 200)
        }
    }

    @Test(
        .timeLimit(.minutes(1)),
        arguments: ["42", "[]", #"{"title":"no to"}"#, #"{"to":"ExponentPushToken[a]","data":"x"}"#])
    func malformedSendsAreValidationErrors(_ body: String) async throws {
        try await withSimulator { _, client, _ in
            let response = try await sendExpo(client, body: body)
            #expect(response.status == 400)
            #expect(try json(response)["errors"]?[0]?["code"] == "VALIDATION_ERROR")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func oversizedMessageGetsMessageTooBig() async throws {
        try await withSimulator { _, client, _ in
            let body = #"{"to":"ExponentPushToken[big]","data":{"blob":"\#(String(repeating: "x", count: 4100))"}}"#
            let response = try await sendExpo(client, body: body)
            #expect(response.status == 200)
            #expect(try json(response)["data"]?["details"]?["error"] == "MessageTooBig")
        }
    }
}
