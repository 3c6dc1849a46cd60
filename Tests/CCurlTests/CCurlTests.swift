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

    @Test func linkedLibcurlIsThreadSafe() {
        #expect(relay_curl_is_threadsafe() != 0)
    }
}
