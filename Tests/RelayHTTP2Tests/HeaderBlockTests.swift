import CNGHTTP2
import Testing

@testable import RelayHTTP2

/// ``HeaderBlock``: the name/value pairs nghttp2 is given for a request (RFC 9113 §8.2 and §8.3.1).
@Suite struct HeaderBlockTests {
    /// The pairs of a filled block, as strings, in order.
    static func pairs(_ request: HTTP2Request, authority: String = "api.push.apple.com", path: String = "/3/device/a")
        -> [HTTPHeader]
    {
        var block = HeaderBlock()
        block.fill(request: request, authority: authority, path: path)
        return block.withNameValuePairs { pairs, count in
            (0..<count).map { index in
                let pair = pairs[index]
                return HTTPHeader(
                    String(decoding: UnsafeBufferPointer(start: pair.name, count: pair.namelen), as: UTF8.self),
                    String(decoding: UnsafeBufferPointer(start: pair.value, count: pair.valuelen), as: UTF8.self)
                )
            }
        }
    }

    @Test func pseudoHeadersComeFirstThenTheFieldsInOrderWithLowercaseNames() {
        let request = HTTP2Request(
            url: "https://api.push.apple.com/3/device/a",
            headers: [HTTPHeader("apns-topic", "com.example"), HTTPHeader("Apns-Push-Type", "alert")]
        )
        #expect(
            Self.pairs(request) == [
                HTTPHeader(":method", "POST"), HTTPHeader(":scheme", "https"),
                HTTPHeader(":authority", "api.push.apple.com"), HTTPHeader(":path", "/3/device/a"),
                HTTPHeader("apns-topic", "com.example"), HTTPHeader("apns-push-type", "alert"),
            ])
    }

    @Test func connectionSpecificFieldsAreLeftOut() {
        let dropped = ["Connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host", "TE"]
        let request = HTTP2Request(
            method: "GET",
            url: "https://example.com/",
            headers: dropped.map { HTTPHeader($0, "x") } + [
                HTTPHeader("tf", "kept"), HTTPHeader("hosts", "kept"), HTTPHeader("upgrades", "kept"),
                HTTPHeader("connections", "kept"),
            ]
        )
        #expect(
            Self.pairs(request).dropFirst(4).map(\.name) == ["tf", "hosts", "upgrades", "connections"])
    }

    @Test(arguments: [1, 9, 10, 99, 100, 101, 4096, 1_000_000])
    func aBodyGetsItsContentLengthInDecimal(length: Int) {
        let request = HTTP2Request(url: "https://example.com/", body: Array(repeating: 0x78, count: length))
        #expect(Self.pairs(request).last == HTTPHeader("content-length", String(length)))
    }

    @Test func aGivenContentLengthIsKeptAndNotRepeated() {
        let request = HTTP2Request(
            url: "https://example.com/", headers: [HTTPHeader("Content-Length", "3")], body: Array("abc".utf8))
        #expect(Self.pairs(request).filter { $0.name == "content-length" } == [HTTPHeader("content-length", "3")])
    }

    @Test func noBodyNoContentLength() {
        let request = HTTP2Request(method: "GET", url: "https://example.com/")
        #expect(!Self.pairs(request).contains { $0.name == "content-length" })
    }

    @Test func aReusedBlockHoldsOnlyTheLatestRequest() {
        var block = HeaderBlock()
        block.fill(
            request: HTTP2Request(url: "https://example.com/", headers: [HTTPHeader("a", "1")], body: [1, 2]),
            authority: "example.com", path: "/first")
        let second = HTTP2Request(method: "GET", url: "https://example.com/")
        block.fill(request: second, authority: "example.com", path: "/second")
        let count = block.withNameValuePairs { _, count in count }
        #expect(count == 4)
        #expect(Self.pairs(second, authority: "example.com", path: "/second")[3] == HTTPHeader(":path", "/second"))
    }
}
