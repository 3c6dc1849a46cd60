import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// Process-wide libcurl set-up, done once before the first handle is made.
enum CurlGlobal {
    /// `curl_global_init`, once. Debian 12's libcurl is built thread-safe (`CURL_VERSION_THREADSAFE`), so doing it
    /// lazily from whichever thread first needs it is safe; SIGPIPE is ignored because TLS writes to a closed socket
    /// would otherwise kill the process (`CURLOPT_NOSIGNAL` covers libcurl's own signals only).
    static let initialized: Bool = {
        #if canImport(Glibc)
        signal(SIGPIPE, SIG_IGN)
        #endif
        return curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()
}

/// Maps a libcurl result to a typed error.
enum CurlResult {
    /// The error for a failed transfer, given the status of the proxy's answer to its CONNECT (0: none).
    ///
    /// Every way a proxy fails is `connectFailed`, since the request never reached the upstream: the proxy's name
    /// does not resolve (`CURLE_COULDNT_RESOLVE_PROXY`), it cannot be reached (`CURLE_COULDNT_CONNECT`), its
    /// handshake fails (`CURLE_PROXY`), or it refuses the tunnel with a status other than 2xx, such as 407 for
    /// missing or wrong credentials or 403 for a forbidden host. libcurl reports that refusal with a code that
    /// otherwise means a lost connection (`CURLE_RECV_ERROR` in libcurl 8), so the CONNECT status decides.
    static func error(for code: CURLcode, proxyConnectStatus: Int) -> HTTP2Error {
        guard proxyConnectStatus != 0, !(200..<300).contains(proxyConnectStatus) else { return error(for: code) }
        return HTTP2Error(
            .connectFailed,
            curlCode: Int(code.rawValue),
            detail: "the proxy refused the tunnel (CONNECT answered \(proxyConnectStatus))"
        )
    }

    static func error(for code: CURLcode) -> HTTP2Error {
        let value = Int(code.rawValue)
        let text = curl_easy_strerror(code).map { String(cString: $0) } ?? "unknown"
        let kind: HTTP2Error.Kind
        switch code {
        case CURLE_OPERATION_TIMEDOUT: kind = .timeout
        case CURLE_HTTP2_STREAM: kind = .streamReset
        case CURLE_HTTP2: kind = .protocolError
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT, CURLE_PROXY:
            kind = .connectFailed
        case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE: kind = .connectionLost
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED:
            kind = .tls
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT: kind = .invalidRequest
        case CURLE_WRITE_ERROR: kind = .responseTooLarge
        default: kind = .other
        }
        // libcurl does not say whether a timed-out request was sent: it may have been, so it counts as sent.
        return HTTP2Error(kind, curlCode: value, detail: text, requestSent: kind == .timeout)
    }
}
