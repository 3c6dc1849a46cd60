extension HTTP2TestServer {
    /// How an ``HTTP2TestServer`` listens and behaves; every property has a default.
    package struct Configuration: Sendable {
        /// The address to bind; certificates always cover `127.0.0.1`, `::1` and `localhost` as well.
        package var host: String = "127.0.0.1"
        /// The port to bind; 0 picks a free one (read it back from ``HTTP2TestServer/port``). The listening socket
        /// sets `SO_REUSEADDR`, so a new server can bind a stopped server's port at once.
        package var port: Int = 0
        /// The `SETTINGS_MAX_CONCURRENT_STREAMS` the server advertises. A client that opens more streams at once
        /// gets a connection error (`PROTOCOL_ERROR`), as swift-nio-http2 enforces the limit.
        /// ``HTTP2TestServer/setMaxConcurrentStreams(_:)`` changes it while the server runs; this property keeps the
        /// value the server started with.
        package var maxConcurrentStreams: Int = 100
        /// After this many streams on one connection the server sends `GOAWAY` with the last of them as the last
        /// stream ID, finishes those streams and closes the connection; `nil` never.
        package var goAwayEveryStreams: Int? = nil
        /// Where to write `ca.pem` (and `ca-key.pem`); a fresh temporary directory when `nil`. A directory that
        /// already holds both files keeps its CA, so a restarted server is trusted by the same file.
        package var certificateDirectory: String? = nil
        /// The `SETTINGS_INITIAL_WINDOW_SIZE` the server advertises, which is also the window each request stream is
        /// topped up to with `WINDOW_UPDATE` as its body is read: a small value (say 1,024 bytes) makes a client send
        /// a larger body in window-sized pieces. Between 1 and 2^31 − 1 (RFC 9113 §6.5.2).
        /// The default, 1 MiB, is large enough that a request body of a few KiB never waits for a `WINDOW_UPDATE`,
        /// even at thousands of streams.
        package var initialWindowSize: Int = 1 << 20
        /// The protocols the server offers by ALPN. A connection that negotiates anything but `h2` (or nothing, when
        /// the client offered none of these) is closed right after the TLS handshake, so `["http/1.1"]` stands in for
        /// a server without HTTP/2.
        package var alpnProtocols: [String] = ["h2"]
        /// When `true`, the handler gets each request as soon as its HEADERS arrive, with an empty body, and the
        /// response (with `END_STREAM`) is followed by `RST_STREAM(NO_ERROR)` on that stream, as nginx answers early
        /// and RFC 9113 §8.1 allows; the rest of the request body is read and discarded. A stream the client had
        /// already ended is closed by the response itself and gets no `RST_STREAM`.
        package var answerBeforeBody: Bool = false
        /// With ``answerBeforeBody``: the response is not followed by `RST_STREAM(NO_ERROR)` and the rest of the
        /// request body is not read, so the client's stream window stays shut. A client uploading more than the window
        /// then holds a complete answer on a stream it cannot end, until it resets the stream itself: RFC 9113 §8.1
        /// lets a server stop there, and the answer must still count.
        package var keepStreamAfterEarlyAnswer: Bool = false

        package init(
            host: String = "127.0.0.1",
            port: Int = 0,
            maxConcurrentStreams: Int = 100,
            goAwayEveryStreams: Int? = nil,
            certificateDirectory: String? = nil,
            initialWindowSize: Int = 1 << 20,
            alpnProtocols: [String] = ["h2"],
            answerBeforeBody: Bool = false,
            keepStreamAfterEarlyAnswer: Bool = false
        ) {
            self.host = host
            self.port = port
            self.maxConcurrentStreams = maxConcurrentStreams
            self.goAwayEveryStreams = goAwayEveryStreams
            self.certificateDirectory = certificateDirectory
            self.initialWindowSize = initialWindowSize
            self.alpnProtocols = alpnProtocols
            self.answerBeforeBody = answerBeforeBody
            self.keepStreamAfterEarlyAnswer = keepStreamAfterEarlyAnswer
        }
    }
}
