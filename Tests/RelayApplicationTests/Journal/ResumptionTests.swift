import Foundation
import RelayCore
import Testing

@testable import RelayApplication

/// What a relay does with a notification it finds in the journal at start, and when a notification's deadline is.
@Suite struct ResumptionTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: [
        // attempts, seconds to the deadline, provider, expected: sent (detail) or concluded (detail)
        (0, 10, Provider.apns, "send: journaled before its first send; sent again with the same apns-id"),
        (1, 10, .apns, "send: in flight when the relay stopped, outcome unknown; sent again with the same apns-id"),
        (2, 1, .fcm, "send: in flight when the relay stopped, outcome unknown; sent again"),
        (
            1, 0, .apns,
            "conclude: in flight when the relay stopped, outcome unknown; its deadline had passed, not sent again"
        ),
        (
            3, -60, .expo,
            "conclude: in flight when the relay stopped, outcome unknown; its deadline had passed, not sent again"
        ),
        (0, -1, .apns, "conclude: journaled before its first send; its deadline had passed, not sent again"),
    ])
    func anEntryIsSentWhileItsDeadlineHoldsAndConcludedAfter(
        attempts: Int, toDeadline: Int, provider: Provider, expected: String
    ) {
        let decision = Resumption.decide(
            attempts: attempts, deadline: Self.now.addingTimeInterval(TimeInterval(toDeadline)), provider: provider,
            now: Self.now)
        let prefix = "resumed after a restart: "
        switch decision {
        case .send(let detail):
            #expect(detail.hasPrefix(prefix))
            #expect("send: \(detail.dropFirst(prefix.count))" == expected)
        case .conclude(let outcome, let detail):
            // The outcome is unknown however the entry was written: ProviderUnavailable, saying so.
            #expect(outcome == .unavailable(reason: "outcome unknown after a restart", retryAfter: nil))
            #expect(detail.hasPrefix(prefix))
            #expect("conclude: \(detail.dropFirst(prefix.count))" == expected)
        }
    }

    @Test func theDeadlineIsTheEarliestOfTheWindowTheTimeToLiveAndTheExpiration() throws {
        func deadline(_ fields: String) throws -> TimeInterval {
            var issues: [ValidationIssue] = []
            let message = try #require(
                PushMessage.parse(
                    JSONValue.decode(Array(#"{"to":"ExponentPushToken[a]","body":"x"\#(fields)}"#.utf8)) ?? .null,
                    at: .root, issues: &issues))
            let push = try #require(message.pushes.first)
            return Resumption.deadline(of: push, admittedAt: Self.now, window: .seconds(300))
                .timeIntervalSince(Self.now)
        }
        #expect(try deadline("") == 300)
        #expect(try deadline(#","ttl":60"#) == 60)
        #expect(try deadline(#","ttl":0"#) == 0)
        #expect(try deadline(#","ttl":3600"#) == 300)
        #expect(try deadline(#","expiration":1800000100"#) == 100)
        #expect(try deadline(#","expiration":1800000100,"ttl":30"#) == 30)
    }
}
