import NIOCore
import NIOEmbedded
import Testing

@testable import RelayServer

/// `HTTP2HeaderBlockTimeoutHandler` on an `EmbeddedChannel` whose clock the test moves, fed the bytes a client sends
/// after TLS: a header block must end (END_HEADERS) within the header timeout of its first frame, however its frames
/// are cut into reads; other frames, whatever their payload holds, start no timer.
@Suite struct HTTP2HeaderBlockTimeoutHandlerTests {
    static let timeout = TimeAmount.seconds(10)
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt8 = 1, payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count >> 16), UInt8(payload.count >> 8 & 0xff), UInt8(payload.count & 0xff), type, flags]
            + [0, 0, 0, stream] + payload
    }
    static let endHeaders: UInt8 = 0x4
    static let settings = frame(type: 0x4, stream: 0, payload: [])

    static func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTP2HeaderBlockTimeoutHandler(timeout: timeout))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    /// Sends `bytes` in reads of `size` bytes; every byte is passed on unchanged.
    static func send(_ channel: EmbeddedChannel, _ bytes: [UInt8], readsOf size: Int = .max) throws {
        var offset = 0
        while offset < bytes.count {
            let end = offset + min(size, bytes.count - offset)
            try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end]))
            let passed = try #require(try channel.readInbound(as: ByteBuffer.self))
            #expect(Array(passed.readableBytesView) == Array(bytes[offset..<end]))
            offset = end
        }
    }

    @Test(arguments: [1, 5, 100])
    func aHeaderBlockThatNeverEndsIsClosedAtTheHeaderTimeout(readSize: Int) throws {
        let channel = try Self.channel()
        try Self.send(
            channel, Self.preface + Self.settings + Self.frame(type: 0x1, payload: [0x82, 0x86]), readsOf: readSize)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        // A CONTINUATION without END_HEADERS does not extend the deadline.
        try Self.send(channel, Self.frame(type: 0x9, payload: [0x84]), readsOf: readSize)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5) - .milliseconds(1))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(!channel.isActive)
    }

    @Test(arguments: [1, 5, 100])
    func aHeaderBlockEndedInTimeStopsTheTimer(readSize: Int) throws {
        let channel = try Self.channel()
        try Self.send(channel, Self.preface + Self.frame(type: 0x1, payload: [0x82, 0x86]), readsOf: readSize)
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        try Self.send(channel, Self.frame(type: 0x9, flags: Self.endHeaders, payload: [0x84]), readsOf: readSize)
        // Then a whole HEADERS frame, and DATA whose payload looks like a HEADERS frame without END_HEADERS.
        try Self.send(
            channel,
            Self.frame(type: 0x1, flags: Self.endHeaders, stream: 3, payload: [0x82, 0x86, 0x84])
                + Self.frame(type: 0x0, stream: 3, payload: Self.frame(type: 0x1, payload: [0x82])),
            readsOf: readSize)
        channel.embeddedEventLoop.advanceTime(by: .seconds(3_600))
        #expect(channel.isActive)
    }
}
