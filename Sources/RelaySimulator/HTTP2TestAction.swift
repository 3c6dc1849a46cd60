package import NIOHTTP2

/// What the test server does with a request, as decided by the server's handler.
package enum HTTP2TestAction: Sendable {
    /// Answer with `response`, after `delay` if it is positive.
    ///
    /// The delay runs on the connection's event loop (a scheduled task), so it holds no thread and no task.
    case respond(HTTP2TestResponse, delay: Duration = .zero)

    /// Send `RST_STREAM` with `code` instead of any response headers.
    ///
    /// libcurl 7.88.1 retries `.refusedStream` transparently and reports other codes as `CURLE_HTTP2_STREAM` (92)
    /// with response code 0 (PROTOCOLS.md §5.3).
    case resetStream(code: HTTP2ErrorCode)

    /// Send `GOAWAY` (`NO_ERROR`) on this request's connection with this stream as the last stream ID, then answer
    /// this stream with the response, or reset it with `REFUSED_STREAM` when there is none.
    ///
    /// Streams with higher IDs are refused by the GOAWAY: the server drops them and never hands them to the handler
    /// again (one whose handler already runs gets its answer discarded). The connection closes once this stream ends.
    case goAway(thenRespond: HTTP2TestResponse?)

    /// Close this request's TCP connection at once: no response, no `GOAWAY`, no TLS `close_notify`, and a TCP
    /// reset rather than a FIN.
    case dropConnection

    /// Stall this request's connection: it stops reading its socket and never sends another byte (this request
    /// gets no answer, a `PING` no ACK), while the TCP connection stays open until the server drops it or shuts
    /// down. See ``HTTP2TestServer/stallAllConnections()``.
    case stallConnection
}
