import CCurl
import Foundation

/// One request's life inside libcurl: its easy handle's per-transfer state.
///
/// Owned by the pool's curl thread from hand-over to completion; callbacks reach it through an unretained pointer
/// that the owner keeps valid by holding the transfer until its handle leaves the multi handle.
final class CurlTransfer {
    let id: HTTP2Pool.RequestID
    let request: HTTP2Request
    let completion: HTTP2Pool.Completion
    let submitted: ContinuousClock.Instant
    let deadline: ContinuousClock.Instant
    let maxResponseBytes: Int

    /// The request asked for a fresh connection and the pool's machine granted it (at most one per
    /// ``HTTP2Pool/StateMachine/Settings/freshConnectionInterval``): the transfer sets `CURLOPT_FRESH_CONNECT`.
    var freshConnection = false
    var started: ContinuousClock.Instant?
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var status = 0
    var headers: [HTTPHeader] = []
    var body: [UInt8] = []
    var bodyTooLarge = false
    /// The response, once libcurl finished the transfer with one; the machine then says when to hand it over.
    var response: HTTP2Response?

    init(
        id: HTTP2Pool.RequestID,
        request: HTTP2Request,
        completion: HTTP2Pool.Completion,
        submitted: ContinuousClock.Instant,
        deadline: ContinuousClock.Instant,
        maxResponseBytes: Int
    ) {
        self.id = id
        self.request = request
        self.completion = completion
        self.submitted = submitted
        self.deadline = deadline
        self.maxResponseBytes = maxResponseBytes
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
    }

    /// Appends response body bytes; refusing them (returning fewer) makes libcurl abort the transfer.
    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard body.count + bytes.count <= maxResponseBytes else {
            bodyTooLarge = true
            return 0
        }
        body.append(contentsOf: bytes)
        return bytes.count
    }

    /// Takes one header line. A status line starts a new header block (after an informational response).
    func appendHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var line = bytes[...]
        while let last = line.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") {
            line = line.dropLast()
        }
        if line.starts(with: "HTTP/".utf8) {
            headers.removeAll(keepingCapacity: true)
            return
        }
        if let field = HTTPHeader(line: line) { headers.append(field) }
    }
}

extension HTTPHeader {
    /// The field of a header line without its line ending (`Name: value`): the name in lowercase, the value without
    /// the blanks around it; `nil` without a colon.
    ///
    /// Field names are ASCII tokens and the blanks around a value are spaces and tabs (RFC 9110 §5.1, §5.6.3), so
    /// both are handled on the bytes, without Foundation's Unicode character sets (which cost the curl thread about
    /// 1 % of the relay's CPU time under load).
    init?(line: Slice<UnsafeRawBufferPointer>) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let nameBytes = line[..<colon]
        let name = String(unsafeUninitializedCapacity: nameBytes.count) { text in
            for (offset, byte) in nameBytes.enumerated() {
                text[offset] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            }
            return nameBytes.count
        }
        var value = line[(colon + 1)...]
        while let first = value.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") {
            value = value.dropFirst()
        }
        while let last = value.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
            value = value.dropLast()
        }
        self.init(name, String(decoding: value, as: UTF8.self))
    }
}

// Thread-confined to the pool's curl thread, like every libcurl handle.
@available(*, unavailable)
extension CurlTransfer: Sendable {}
