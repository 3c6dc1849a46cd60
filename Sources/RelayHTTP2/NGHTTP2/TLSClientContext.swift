import CNGHTTP2

/// The OpenSSL client context of one pool: TLS 1.2 or later, ALPN `h2` only, the peer verified against the system
/// store and an optional extra CA file.
///
/// `@unchecked Sendable` is safe because the `SSL_CTX` is configured completely in `init` and afterwards only handed
/// to `SSL_new`, which OpenSSL documents as safe on a context shared between threads (threads(7): an `SSL_CTX` may be
/// used by several threads once it is no longer modified); `deinit` runs when no thread holds the context any more.
final class TLSClientContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init(caFile: String?) throws(HTTP2Error) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTP2Error(.tls, detail: "SSL_CTX_new failed: \(Self.lastError())")
        }
        pointer = context
        guard relay_ssl_ctx_require_tls12(context) == 1 else {
            throw HTTP2Error(.tls, detail: "cannot require TLS 1.2: \(Self.lastError())")
        }
        relay_ssl_ctx_allow_partial_writes(context)
        // Without read-ahead, OpenSSL reads a record's header and then its body, two read(2) calls per record; an
        // upstream answering 100 streams in 100 small records cost the loop thread 4 reads per stream (`perf stat -e
        // syscalls:sys_enter_read` on the relay, `relay-bench relay` batched APNs via nginx). The loop always reads
        // until SSL_read wants more from the socket, so nothing read ahead waits in OpenSSL for an epoll event.
        relay_ssl_ctx_read_ahead(context)
        // ALPN offers h2 alone: a server that does not pick it is refused, never spoken to over HTTP/1.1.
        let alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        guard SSL_CTX_set_alpn_protos(context, alpn, UInt32(alpn.count)) == 0 else {
            throw HTTP2Error(.tls, detail: "cannot set ALPN: \(Self.lastError())")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        guard SSL_CTX_set_default_verify_paths(context) == 1 else {
            throw HTTP2Error(.tls, detail: "cannot load the system's trusted certificates: \(Self.lastError())")
        }
        if let caFile, SSL_CTX_load_verify_locations(context, caFile, nil) != 1 {
            throw HTTP2Error(.tls, detail: "cannot load the CA file \(caFile): \(Self.lastError())")
        }
    }

    deinit {
        SSL_CTX_free(pointer)
    }

    /// The oldest error on this thread's OpenSSL error queue, as text; the queue is cleared.
    static func lastError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no detail" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
