import Metrics
import NIOCore

/// Bounds an HTTP/2 header block by ``ConnectionLimits/headerTimeout``: from the frame header of a HEADERS or
/// PUSH_PROMISE frame until the end of the frame that carries END_HEADERS (the HEADERS frame itself, or its last
/// CONTINUATION frame), then the connection is closed. Sits between TLS and `NIOHTTP2Handler`, reading only the
/// 9-byte frame headers (RFC 9113 §4.1) of the bytes it passes on unchanged.
///
/// Hand-written because swift-nio-http2 gathers a header block before it opens the stream, and bounds only the
/// block's size and its number of CONTINUATION frames, not its time: a client trickling a header block opens no stream,
/// so neither ``RequestTimeoutHandler`` (per stream) nor the connection's idle timeout (which counts open streams)
/// would see it sooner than the idle timeout. No other frame may come between a header block's frames (RFC 9113
/// §6.10), so a stalled block stalls the whole connection's input, and closing the connection costs nothing more.
final class HTTP2HeaderBlockTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The client connection preface, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", comes before the first frame.
    static let prefaceLength = 24
    static let frameHeaderLength = 9

    private let timeout: TimeAmount
    private var prefaceRemaining = HTTP2HeaderBlockTimeoutHandler.prefaceLength
    /// The bytes of a frame header read so far (up to 9).
    private var frameHeader: [UInt8] = []
    private var payloadRemaining = 0
    /// A header block has begun and its END_HEADERS frame has not arrived whole.
    private var inHeaderBlock = false
    /// The frame being read carries END_HEADERS: the block ends with its payload.
    private var frameEndsHeaderBlock = false
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
        self.frameHeader.reserveCapacity(Self.frameHeaderLength)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.cancelTimer()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.scan(self.unwrapInboundIn(data).readableBytesView)
        if !self.inHeaderBlock {
            self.cancelTimer()
        } else if self.timer == nil {
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            self.timer = context.eventLoop.scheduleTask(in: self.timeout) {
                let (handler, context) = bound.value
                handler.timer = nil
                Counter(label: RequestTimeoutHandler.timeoutsCounterLabel, dimensions: [("phase", "header")])
                    .increment()
                context.close(promise: nil)
            }
        }
        context.fireChannelRead(data)
    }

    /// Follows the frames in `bytes`, skipping payloads whole.
    private func scan(_ bytes: ByteBufferView) {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let available = bytes.endIndex - index
            if self.prefaceRemaining > 0 {
                let skipped = min(self.prefaceRemaining, available)
                self.prefaceRemaining -= skipped
                index += skipped
            } else if self.payloadRemaining > 0 {
                let skipped = min(self.payloadRemaining, available)
                self.payloadRemaining -= skipped
                index += skipped
                if self.payloadRemaining == 0 { self.frameEnded() }
            } else {
                self.frameHeader.append(bytes[index])
                index += 1
                if self.frameHeader.count == Self.frameHeaderLength { self.frameHeaderRead() }
            }
        }
    }

    private func frameHeaderRead() {
        let header = self.frameHeader
        self.frameHeader.removeAll(keepingCapacity: true)
        self.payloadRemaining = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
        let type = header[3]
        let endHeaders = header[4] & 0x4 != 0
        switch type {
        case 0x1, 0x5:  // HEADERS, PUSH_PROMISE: a header block begins.
            self.inHeaderBlock = true
            self.frameEndsHeaderBlock = endHeaders
        case 0x9:  // CONTINUATION
            self.frameEndsHeaderBlock = endHeaders
        default:
            self.frameEndsHeaderBlock = false
        }
        if self.payloadRemaining == 0 { self.frameEnded() }
    }

    private func frameEnded() {
        if self.frameEndsHeaderBlock {
            self.inHeaderBlock = false
            self.frameEndsHeaderBlock = false
        }
    }

    private func cancelTimer() {
        self.timer?.cancel()
        self.timer = nil
    }
}
