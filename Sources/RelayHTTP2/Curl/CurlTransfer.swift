import CCurl
import Foundation

/// One request's life inside libcurl: its easy handle's per-transfer state.
///
/// Owned by the pool's curl thread from hand-over to completion; callbacks reach it through an unretained pointer
/// that the owner keeps valid by holding the transfer until its handle leaves the multi handle.
final class CurlTransfer {
    let id: HTTP2Pool.RequestID
    let request: HTTP2Request
    let continuation: CheckedContinuation<HTTP2Response, any Error>
    let submitted: ContinuousClock.Instant
    let deadline: ContinuousClock.Instant
    let maxResponseBytes: Int

    var started: ContinuousClock.Instant?
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var status = 0
    var headers: [HTTPHeader] = []
    var body: [UInt8] = []
    var bodyTooLarge = false

    init(
        id: HTTP2Pool.RequestID,
        request: HTTP2Request,
        continuation: CheckedContinuation<HTTP2Response, any Error>,
        submitted: ContinuousClock.Instant,
        deadline: ContinuousClock.Instant,
        maxResponseBytes: Int
    ) {
        self.id = id
        self.request = request
        self.continuation = continuation
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
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        headers.append(HTTPHeader(name, value))
    }
}

// Thread-confined to the pool's curl thread, like every libcurl handle.
@available(*, unavailable)
extension CurlTransfer: Sendable {}
