import NIOHPACK
import Testing

@testable import RelaySimulator

@Suite struct HTTP2TestStreamTests {
    @Test func responseHeadersStartWithStatusAndDropConnectionSpecificOnes() {
        let response = HTTP2TestResponse(
            status: 429,
            headers: [
                (name: "Retry-After", value: "1"),
                (name: "connection", value: "keep-alive"),
                (name: "Keep-Alive", value: "timeout=5"),
                (name: "transfer-encoding", value: "chunked"),
                (name: "upgrade", value: "h2c"),
                (name: "proxy-connection", value: "close"),
                (name: ":status", value: "200"),
                (name: "content-length", value: "1"),
            ],
            body: Array("{}".utf8)
        )
        let headers = HTTP2TestStream.responseHeaders(response)
        #expect(headers.map(\.0) == [":status", "retry-after", "content-type", "content-length"])
        #expect(headers.map(\.1) == ["429", "1", "application/octet-stream", "2"])
    }

    @Test func givenContentTypeIsKept() {
        let headers = HTTP2TestStream.responseHeaders(.json(200, "{}"))
        #expect(headers.filter { $0.0 == "content-type" }.map(\.1) == ["application/json"])
    }

    @Test func requestSplitsPseudoHeadersOut() {
        let request = HTTP2TestStreamHandler.makeRequest(
            HPACKHeaders([
                (":method", "POST"), (":scheme", "https"), (":path", "/v1/x"), (":authority", "h:1"), ("a", "b"),
            ]),
            connectionID: 4,
            streamID: 9
        )
        #expect(request.method == "POST")
        #expect(request.path == "/v1/x")
        #expect(request.authority == "h:1")
        #expect(request.headers.map(\.name) == ["a"])
        #expect(request.header("A") == "b")
        #expect(request.connectionID == 4)
        #expect(request.streamID == 9)
    }
}

extension HTTP2TestStreamTests {
    @Test func headersAcceptUnlabelledTuples() {
        // Callers write header lists as plain ("name", "value") pairs.
        let response = HTTP2TestResponse(status: 200, headers: [("apns-id", "A")], body: [])
        let json = HTTP2TestResponse.json(200, "{}", headers: [("apns-id", "B")])
        #expect(response.headers.map(\.name) == ["apns-id"])
        #expect(json.headers.map(\.value) == ["application/json", "B"])
    }
}
