internal import NIOCore

/// Sits between TLS and `NIOHTTP2Handler`, reads the header of every HTTP/2 frame going either way for the frame
/// counters of ``HTTP2TestServerStatistics``, and cuts a stalled connection off from its socket.
///
/// ### Why below NIOHTTP2Handler
/// Above it, not every frame arrives anywhere: swift-nio-http2 drops a `RST_STREAM` for a stream that is already
/// closed (libcurl's reset after a complete response) and hands the others to stream channels that may be gone. Below
/// it every frame passes as plain bytes, and the fixed 9-byte frame header (RFC 9113 §4.1) is all the counters need,
/// so nothing is decoded twice and no payload is copied.
///
/// Confined to the connection's event loop.
final class HTTP2TestWireHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let shared: HTTP2TestServer.SharedState
    /// The client's frames; the 24-byte connection preface comes first (RFC 9113 §3.4).
    private var inbound = HTTP2FrameHeaderScanner(prefaceLength: 24)
    /// The server's frames; its preface is a plain SETTINGS frame.
    private var outbound = HTTP2FrameHeaderScanner(prefaceLength: 0)
    private var streams = HTTP2TestResponseTracker()
    /// Once set, nothing passes either way any more and no read is requested.
    private(set) var isStalled = false

    init(shared: HTTP2TestServer.SharedState) {
        self.shared = shared
    }

    /// Stops everything: bytes already read are dropped instead of reaching HTTP/2, writes fail without reaching TLS,
    /// and read requests are swallowed. The caller also turns `autoRead` off, so the socket is no longer read at all.
    func stall() {
        self.isStalled = true
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !self.isStalled else {
            return
        }
        var bytes = self.unwrapInboundIn(data)
        while let header = self.inbound.nextHeader(in: &bytes) {
            self.received(header)
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard !self.isStalled else {
            return
        }
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !self.isStalled else {
            promise?.fail(HTTP2TestConnectionStalledError())
            return
        }
        if case .byteBuffer(var bytes) = self.unwrapOutboundIn(data) {
            while let header = self.outbound.nextHeader(in: &bytes) {
                self.sent(header)
            }
        }
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        guard !self.isStalled else {
            return
        }
        context.flush()
    }

    func read(context: ChannelHandlerContext) {
        guard !self.isStalled else {
            return
        }
        context.read()
    }

    private func received(_ header: HTTP2FrameHeaderScanner.FrameHeader) {
        switch header.type {
        case HTTP2FrameHeaderScanner.FrameHeader.headers:
            self.streams.receivedHeaders(streamID: header.streamID)
        case HTTP2FrameHeaderScanner.FrameHeader.rstStream:
            self.shared.resetReceived(afterResponse: self.streams.receivedReset(streamID: header.streamID))
        case HTTP2FrameHeaderScanner.FrameHeader.ping where !header.hasFlag(HTTP2FrameHeaderScanner.FrameHeader.ack):
            self.shared.pingReceived()
        default:
            break
        }
    }

    private func sent(_ header: HTTP2FrameHeaderScanner.FrameHeader) {
        switch header.type {
        case HTTP2FrameHeaderScanner.FrameHeader.headers, HTTP2FrameHeaderScanner.FrameHeader.data:
            if header.hasFlag(HTTP2FrameHeaderScanner.FrameHeader.endStream) {
                self.streams.sentEndStream(streamID: header.streamID)
            }
        case HTTP2FrameHeaderScanner.FrameHeader.rstStream:
            self.streams.sentReset(streamID: header.streamID)
        default:
            break
        }
    }
}

/// The error of a write on a connection that ``HTTP2TestWireHandler`` cut off; it never reaches the peer.
struct HTTP2TestConnectionStalledError: Error {}

/// Finds the frame headers in one direction of an HTTP/2 connection, fed with the bytes as they come, in pieces of
/// any size; payloads are skipped, not read.
struct HTTP2FrameHeaderScanner {
    /// The fixed part of a frame (RFC 9113 §4.1).
    struct FrameHeader: Equatable {
        static let data: UInt8 = 0x0
        static let headers: UInt8 = 0x1
        static let rstStream: UInt8 = 0x3
        static let settings: UInt8 = 0x4
        static let ping: UInt8 = 0x6
        /// The flag of DATA and HEADERS that ends the sender's side of the stream.
        static let endStream: UInt8 = 0x1
        /// The flag of SETTINGS and PING that marks an acknowledgement.
        static let ack: UInt8 = 0x1

        var length: Int
        var type: UInt8
        var flags: UInt8
        /// The stream identifier without the reserved bit.
        var streamID: UInt32

        func hasFlag(_ flag: UInt8) -> Bool {
            self.flags & flag != 0
        }
    }

    private static let headerLength = 9

    /// Bytes still to skip: the rest of the preface, then the rest of the current frame's payload.
    private var skip: Int
    /// The start of a frame header split across buffers.
    private var partial: [UInt8] = []

    /// - Parameter prefaceLength: Bytes before the first frame (the client's connection preface), skipped unread.
    init(prefaceLength: Int) {
        self.skip = prefaceLength
    }

    /// Consumes `bytes` up to and including the next complete frame header and returns that header, or consumes all
    /// of them and returns `nil` when they hold no further complete header. Call it again until it returns `nil`.
    mutating func nextHeader(in bytes: inout ByteBuffer) -> FrameHeader? {
        while bytes.readableBytes > 0 {
            if self.skip > 0 {
                let skipped = min(self.skip, bytes.readableBytes)
                bytes.moveReaderIndex(forwardBy: skipped)
                self.skip -= skipped
                continue
            }
            if self.partial.isEmpty, bytes.readableBytes >= Self.headerLength {
                // The usual case: a whole header in this buffer, read in place.
                let start = bytes.readerIndex
                let header = Self.parse { bytes.getInteger(at: start + $0, as: UInt8.self) ?? 0 }
                bytes.moveReaderIndex(forwardBy: Self.headerLength)
                self.skip = header.length
                return header
            }
            let taken = min(Self.headerLength - self.partial.count, bytes.readableBytes)
            self.partial.append(contentsOf: bytes.readableBytesView.prefix(taken))
            bytes.moveReaderIndex(forwardBy: taken)
            if self.partial.count == Self.headerLength {
                let partial = self.partial
                let header = Self.parse { partial[$0] }
                self.partial.removeAll(keepingCapacity: true)
                self.skip = header.length
                return header
            }
        }
        return nil
    }

    /// Decodes a header from its nine bytes, read through `byte(offset)`.
    private static func parse(_ byte: (Int) -> UInt8) -> FrameHeader {
        let length = Int(byte(0)) << 16 | Int(byte(1)) << 8 | Int(byte(2))
        let streamID =
            (UInt32(byte(5)) << 24 | UInt32(byte(6)) << 16 | UInt32(byte(7)) << 8 | UInt32(byte(8)))
            & 0x7fff_ffff
        return FrameHeader(length: length, type: byte(3), flags: byte(4), streamID: streamID)
    }
}

/// Which client streams the server has answered completely, so a `RST_STREAM` from the client can be told apart:
/// before the response (a client giving up) or after it (libcurl 7.88.1 resets many answered streams).
///
/// ### Implementation
/// Client stream IDs only grow (RFC 9113 §5.1.1), so a stream at or below the highest one seen that is neither
/// waiting for its answer nor reset before it was answered has had its `END_STREAM`. Only the exceptions are stored:
/// streams waiting for an answer, and streams reset before their answer; answered streams cost nothing, however many.
struct HTTP2TestResponseTracker {
    private var highestStreamID: UInt32 = 0
    /// Streams whose HEADERS arrived and whose response has not ended yet.
    private var unanswered: Set<UInt32> = []
    /// Streams reset (by either side) before their response ended.
    private var resetUnanswered: Set<UInt32> = []

    /// The client's HEADERS on `streamID`: a new request, or trailers of one already known.
    mutating func receivedHeaders(streamID: UInt32) {
        guard streamID > self.highestStreamID else {
            return
        }
        self.highestStreamID = streamID
        self.unanswered.insert(streamID)
    }

    /// The server sent a frame with `END_STREAM` on `streamID`: its response is complete.
    mutating func sentEndStream(streamID: UInt32) {
        self.unanswered.remove(streamID)
    }

    /// The server sent `RST_STREAM` on `streamID`.
    mutating func sentReset(streamID: UInt32) {
        if self.unanswered.remove(streamID) != nil {
            self.resetUnanswered.insert(streamID)
        }
    }

    /// The client sent `RST_STREAM` on `streamID`.
    ///
    /// - Returns: Whether the server had sent the stream's complete response before.
    mutating func receivedReset(streamID: UInt32) -> Bool {
        if self.unanswered.remove(streamID) != nil {
            self.resetUnanswered.insert(streamID)
            return false
        }
        return streamID != 0 && streamID <= self.highestStreamID && !self.resetUnanswered.contains(streamID)
    }
}
