import CCurl
import Testing

@Suite struct CCurlTests {
    @Test func linkedLibcurlSupportsHTTP2() {
        #expect(relay_curl_supports_http2() != 0)
    }

    @Test func linkedLibcurlUsesOpenSSL() throws {
        let info = try #require(relay_curl_version_info())
        let ssl = try #require(info.pointee.ssl_version)
        #expect(String(cString: ssl).hasPrefix("OpenSSL"))
    }

    /// libcurl 8 (bookworm-backports on Debian 12; scripts/bootstrap.sh installs it): 7.88.1 over-connects, breaks on
    /// reused h2c connections and can report a reset stream as `CURLE_OK`.
    @Test func linkedLibcurlIsAtLeastVersion8_10() throws {
        let info = try #require(relay_curl_version_info())
        let version = info.pointee.version.map { String(cString: $0) } ?? "unknown"
        // 8.10 is the first to offer only h2 in ALPN under CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE (no HTTP/1.1 fallback).
        #expect(info.pointee.version_num >= 0x08_0A_00, "linked libcurl \(version) is older than 8.10")
    }

    @Test func linkedLibcurlIsThreadSafe() {
        #expect(relay_curl_is_threadsafe() != 0)
    }
}
