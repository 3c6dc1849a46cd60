import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer

/// Issue 20: what hostile input costs. Answers bounded whatever the body; ambiguous JSON, wrong media types and
/// compressed bodies that are not one whole stream refused; a declared oversize body refused before it is read;
/// callers without a key tallied rather than recorded one by one, and slowed down with 429.
@Suite(.timeLimit(.minutes(1)))
struct HostileInputTests {
    static func refusals(_ store: any PushStore) async throws -> [AuditRecord] {
        try await store.auditRecords(matching: AuditFilter(event: .refused), after: 0, limit: 1_000).map(\.record)
    }

    // MARK: - Bounded answers

    @Test func oneHundredThousandBadMessagesGetABoundedAnswer() async throws {
        let relay = try await TestRelay()
        let body = "{\"messages\":[" + Array(repeating: "{}", count: 100_000).joined(separator: ",") + "]}"
        try await relay.application.test(.router) { client in
            let response = try await client.post("/v1/push", key: relay.key, json: body)
            #expect(response.status == .badRequest)
            // 100 problems of about 60 bytes each: far below the 13.4 MB this body once got.
            #expect(response.body.readableBytes < 16_384)
            let errors = try #require(response.json?["errors"]?.arrayValue)
            #expect(errors.count == ValidationFailure.maximumIssues)
            let omitted = try #require(response.json?["omittedErrors"]?.integerValue)
            #expect(omitted >= 100_000 - Int64(ValidationFailure.maximumIssues))

            let expo = try await client.post(
                "/--/api/v2/push/send", key: relay.key,
                json: "["
                    + Array(
                        repeating: "{}", count: 100_000
                    ).joined(separator: ",") + "]")
            #expect(expo.status == .badRequest)
            #expect(expo.body.readableBytes < 16_384)
            #expect(expo.json?["omittedErrors"]?.integerValue ?? 0 > 0)
        }
        #expect(relay.sentCount == 0)
    }

    // MARK: - Duplicate keys

    @Test(
        "A repeated key is a 400 naming its path, on every route",
        arguments: [
            (
                "/v1/push", #"{"messages":[{"to":"x","isCriticalAlert":false,"isCriticalAlert":true}]}"#,
                "messages[0].isCriticalAlert"
            ),
            ("/--/api/v2/push/send", #"[{"to":"x","sound":{"critical":true,"critical":false}}]"#, "[0].sound.critical"),
            ("/v1/receipts", #"{"ids":["a"],"ids":["b"]}"#, "ids"),
        ]
    )
    func duplicateKeysAreRefused(route: String, body: String, path: String) async throws {
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post(route, key: relay.key, json: body)
            #expect(response.status == .badRequest)
            let error = try #require(response.json?["errors"]?[0])
            #expect(error["code"] == .string("VALIDATION_ERROR"))
            #expect(error["path"] == .string(path))
            #expect(error["message"]?.stringValue?.contains("appears more than once") == true)
        }
        #expect(relay.sentCount == 0)
    }

    // MARK: - Media types

    @Test(
        "Only JSON media types are read",
        arguments: [
            ("application/json", true),
            ("Application/JSON; charset=utf-8", true),
            ("application/json;charset=UTF-8", true),
            ("application/vnd.pushrelay+json", true),
            ("application/jsonx", false),
            ("application/json-patch", false),
            ("text/json", false),
            ("text/plain", false),
            ("application/+json", false),
            ("application/x-www-form-urlencoded", false),
            ("json", false),
        ]
    )
    func mediaTypes(type: String, accepted: Bool) async throws {
        #expect(isJSONMediaType(type) == accepted)
        let relay = try await TestRelay()
        try await relay.application.test(.router) { client in
            let response = try await client.post(
                "/v1/push", key: relay.key, json: #"{"messages":[]}"#, headers: [.contentType: type])
            // Accepted media types get as far as validation (an empty list of messages).
            #expect(response.status == (accepted ? .badRequest : .unsupportedMediaType))
        }
    }

    // MARK: - Compressed bodies

    static let body = #"{"messages":[]}"#

    static func compressed(_ text: String, _ algorithm: CompressionAlgorithm) throws -> [UInt8] {
        var buffer = ByteBuffer(string: text)
        let out = try buffer.compress(with: algorithm)
        return Array(out.readableBytesView)
    }

    func post(_ bytes: [UInt8], encoding: String) async throws -> (HTTPResponse.Status, String?) {
        let relay = try await TestRelay()
        return try await relay.application.test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/push", method: .post,
                headers: [
                    .contentType: "application/json", .contentEncoding: encoding,
                    .authorization: "Bearer \(relay.key)",
                ],
                body: ByteBuffer(bytes: bytes))
            return (response.status, response.json?["errors"]?[0]?["message"]?.stringValue)
        }
    }

    @Test func wholeGzipZlibAndRawDeflateBodiesAreRead() async throws {
        // Each reaches validation: the empty list of messages is the only problem.
        for (bytes, encoding) in [
            (try Self.compressed(Self.body, .gzip()), "gzip"),
            (try Self.compressed(Self.body, .zlib()), "deflate"),
            (try Self.compressed(Self.body, .deflate()), "deflate"),
        ] {
            let (status, message) = try await post(bytes, encoding: encoding)
            #expect(status == .badRequest)
            #expect(message?.contains("at least one message") == true, "\(encoding): \(message ?? "")")
        }
    }

    @Test func aSecondGzipMemberOrTrailingDataIsRefused() async throws {
        let first = try Self.compressed(Self.body, .gzip())
        let second = try Self.compressed(#"{"messages":[{"to":"x"}]}"#, .gzip())
        let (status, message) = try await post(first + second, encoding: "gzip")
        #expect(status == .badRequest)
        #expect(message?.contains("after its compressed stream") == true)
        let (junkStatus, junkMessage) = try await post(first + Array("junk".utf8), encoding: "gzip")
        #expect(junkStatus == .badRequest)
        #expect(junkMessage?.contains("4 bytes after its compressed stream") == true)
    }

    @Test func aCutShortStreamIsRefused() async throws {
        let whole = try Self.compressed(String(repeating: " ", count: 5_000) + Self.body, .gzip())
        let (status, message) = try await post(Array(whole.dropLast(10)), encoding: "gzip")
        #expect(status == .badRequest)
        #expect(message?.contains("ends before its compressed stream does") == true)
        let (emptyStatus, _) = try await post([], encoding: "gzip")
        #expect(emptyStatus == .badRequest)
    }

    @Test func aBodyInflatingBeyondTheLimitIsRefused() async throws {
        let bomb = try Self.compressed(String(repeating: " ", count: 2 << 20) + Self.body, .gzip())
        #expect(bomb.count < 10_000)
        let (status, _) = try await post(bomb, encoding: "gzip")
        #expect(status == .contentTooLarge)
    }

    // MARK: - Callers without a key

    @Test func refusalsWithoutAKeyAreTalliedByAddressAndMinute() async throws {
        let clock = ManualClock()
        let relay = try await TestRelay(clock: .manual(clock))
        let junk = "prk_0123456789abcdef_" + String(repeating: "A", count: 43)
        try await relay.application.test(.live) { client in
            for _ in 0..<15 {
                let response = try await client.post("/v1/push", key: junk, json: Self.body)
                #expect(response.status == .unauthorized)
            }
            // The first is recorded at once, the other 14 wait for their minute to end.
            #expect(try await Self.refusals(relay.store).count == 1)
            await relay.relay.flushAnonymousRefusals()
            #expect(try await Self.refusals(relay.store).count == 1)
            clock.advance(by: .seconds(60))
            await relay.relay.flushAnonymousRefusals()
        }
        let refused = try await Self.refusals(relay.store)
        #expect(refused.count == 2)
        #expect(refused.last?.client == "127.0.0.1")
        #expect(refused.last?.keyID == "0123456789abcdef")
        #expect(refused.last?.outcome == "UNAUTHORIZED")
        #expect(refused.last?.detail?.hasPrefix("aggregated: 14 more refusals") == true)
    }

    @Test func anAddressThatKeepsFailingGets429ForItsBadKeysOnly() async throws {
        let clock = ManualClock()
        let relay = try await TestRelay(clock: .manual(clock))
        let junk = "prk_0123456789abcdef_" + String(repeating: "A", count: 43)
        try await relay.application.test(.live) { client in
            for _ in 0..<AuthenticationFailures.burst {
                #expect(try await client.post("/v1/push", key: junk, json: Self.body).status == .unauthorized)
            }
            let limited = try await client.post("/v1/push", key: junk, json: Self.body)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] == "6")
            #expect(limited.json?["errors"]?[0]?["code"] == .string("TOO_MANY_AUTHENTICATION_FAILURES"))
            // The operators' API shares the count: the address, not the route, is judged.
            let admin = try await client.execute(
                uri: "/admin/v1/tenants", method: .get, headers: [.authorization: "Bearer pro_x"])
            #expect(admin.status == .tooManyRequests)
            // A valid key is checked first and served all the same (issue 36; AuthenticationLockoutTests).
            #expect(try await client.post("/v1/push", key: relay.key, json: Self.body).status == .badRequest)
            // Time refills the bucket: one failure's worth every 6 s.
            clock.advance(by: .seconds(6))
            #expect(try await client.post("/v1/push", key: junk, json: Self.body).status == .unauthorized)
            #expect(try await client.post("/v1/push", key: junk, json: Self.body).status == .tooManyRequests)
        }
    }
}

extension JSONValue {
    fileprivate var arrayValue: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}
