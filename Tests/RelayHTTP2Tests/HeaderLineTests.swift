import Testing

@testable import RelayHTTP2

/// Header lines as libcurl hands them over, already without their line ending.
struct HeaderLineTests {
    func field(_ line: String) -> HTTPHeader? {
        Array(line.utf8).withUnsafeBytes { HTTPHeader(line: $0[...]) }
    }

    @Test func theNameIsLowercasedAndTheBlanksAroundTheValueGo() {
        #expect(field("Apns-ID: 6E0B1A0C-0000") == HTTPHeader("apns-id", "6E0B1A0C-0000"))
        #expect(field("retry-after:\t 30 \t") == HTTPHeader("retry-after", "30"))
        #expect(field("X-Empty:") == HTTPHeader("x-empty", ""))
        // Inner blanks and a colon inside the value stay.
        #expect(
            field("www-authenticate: Bearer error=\"invalid_token\", a:b")
                == HTTPHeader("www-authenticate", "Bearer error=\"invalid_token\", a:b"))
    }

    @Test func aLineWithoutAColonIsNoField() {
        #expect(field("not a header") == nil)
        #expect(field("") == nil)
    }
}
