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
        package var maxConcurrentStreams: Int = 100
        /// After this many streams on one connection the server sends `GOAWAY` with the last of them as the last
        /// stream ID, finishes those streams and closes the connection; `nil` never.
        package var goAwayEveryStreams: Int? = nil
        /// Where to write `ca.pem` (and `ca-key.pem`); a fresh temporary directory when `nil`. A directory that
        /// already holds both files keeps its CA, so a restarted server is trusted by the same file.
        package var certificateDirectory: String? = nil

        package init(
            host: String = "127.0.0.1",
            port: Int = 0,
            maxConcurrentStreams: Int = 100,
            goAwayEveryStreams: Int? = nil,
            certificateDirectory: String? = nil
        ) {
            self.host = host
            self.port = port
            self.maxConcurrentStreams = maxConcurrentStreams
            self.goAwayEveryStreams = goAwayEveryStreams
            self.certificateDirectory = certificateDirectory
        }
    }
}
