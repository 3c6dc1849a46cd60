import NIOCore
import Testing

@testable import RelaySimulator

/// The pure parts of ``HTTP2TestWireHandler``: finding frame headers in a byte stream, and telling a reset after a
/// response from one before it.
@Suite struct HTTP2TestWireHandlerTests {
    /// A client preface, a SETTINGS frame with one setting, HEADERS (END_STREAM) on stream 1, and PING.
    private static let clientBytes: [UInt8] =
        Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
        + [0, 0, 6, 0x4, 0, 0, 0, 0, 0] + [0, 3, 0, 0, 0, 100]
        + [0, 0, 2, 0x1, 0x5, 0, 0, 0, 1] + [0x82, 0x84]
        + [0, 0, 8, 0x6, 0, 0, 0, 0, 0] + Array(repeating: 9, count: 8)

    private static let expected: [HTTP2FrameHeaderScanner.FrameHeader] = [
        .init(length: 6, type: 0x4, flags: 0, streamID: 0),
        .init(length: 2, type: 0x1, flags: 0x5, streamID: 1),
        .init(length: 8, type: 0x6, flags: 0, streamID: 0),
    ]

    @Test(arguments: [1, 2, 5, 9, 10, 24, 25, 1000])
    func scannerFindsHeadersWhateverTheChunking(chunkSize: Int) {
        var scanner = HTTP2FrameHeaderScanner(prefaceLength: 24)
        var found: [HTTP2FrameHeaderScanner.FrameHeader] = []
        var offset = 0
        while offset < Self.clientBytes.count {
            let end = min(offset + chunkSize, Self.clientBytes.count)
            var chunk = ByteBuffer(bytes: Self.clientBytes[offset..<end])
            while let header = scanner.nextHeader(in: &chunk) {
                found.append(header)
            }
            #expect(chunk.readableBytes == 0)
            offset = end
        }
        #expect(found == Self.expected)
    }

    @Test func reservedStreamBitIsIgnored() {
        var scanner = HTTP2FrameHeaderScanner(prefaceLength: 0)
        var bytes = ByteBuffer(bytes: [0, 0, 4, 0x3, 0, 0x80, 0, 0, 3, 0, 0, 0, 8])
        #expect(scanner.nextHeader(in: &bytes) == .init(length: 4, type: 0x3, flags: 0, streamID: 3))
        #expect(scanner.nextHeader(in: &bytes) == nil)
    }

    @Test func resetsAreClassifiedByWhetherTheResponseEnded() {
        var tracker = HTTP2TestResponseTracker()
        tracker.receivedHeaders(streamID: 1)
        tracker.receivedHeaders(streamID: 3)
        tracker.receivedHeaders(streamID: 5)
        tracker.receivedHeaders(streamID: 3)  // Trailers change nothing.
        tracker.sentEndStream(streamID: 1)
        tracker.sentReset(streamID: 5)

        let answered = tracker.receivedReset(streamID: 1)
        let waiting = tracker.receivedReset(streamID: 3)
        let resetTwice = tracker.receivedReset(streamID: 3)
        let resetByServer = tracker.receivedReset(streamID: 5)
        let neverOpened = tracker.receivedReset(streamID: 7)
        let connection = tracker.receivedReset(streamID: 0)
        #expect(answered)
        #expect(!waiting, "still waiting for its answer")
        #expect(!resetTwice, "reset before its answer, twice")
        #expect(!resetByServer, "reset by the server before any answer")
        #expect(!neverOpened)
        #expect(!connection)

        // An early answer: END_STREAM, then the server's RST_STREAM(NO_ERROR), then the client's reset.
        tracker.receivedHeaders(streamID: 7)
        tracker.sentEndStream(streamID: 7)
        tracker.sentReset(streamID: 7)
        let afterEarlyAnswer = tracker.receivedReset(streamID: 7)
        #expect(afterEarlyAnswer)
    }
}
