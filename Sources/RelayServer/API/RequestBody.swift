import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RelayApplication
import RelayCore

/// Reads a request's JSON body: media type, size limit, gzip, and JSON syntax, each with its own clear error.
///
/// A `Content-Length` above `limit` is refused before a byte of the body is read (and the connection closed, so that
/// the body is never waited for either).
func readJSONBody(_ request: Request, limit: Int) async throws(RelayHTTPError) -> JSONValue {
    if let type = request.headers[.contentType], !isJSONMediaType(type) {
        throw .unsupportedMediaType
    }
    if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > limit {
        throw .payloadTooLarge(limit: limit)
    }
    var request = request
    var buffer: ByteBuffer
    do {
        buffer = try await request.collectBody(upTo: limit)
    } catch {
        throw .payloadTooLarge(limit: limit)
    }
    if let encoding = request.headers[.contentEncoding]?.lowercased(), encoding != "identity" {
        guard let coding = BodyCoding(encoding) else {
            throw RelayHTTPError(
                .unsupportedMediaType,
                code: .unsupportedMediaType,
                message: "Content-Encoding \(encoding) is not supported; send gzip, deflate or none."
            )
        }
        buffer = try coding.inflate(buffer, limit: limit)
    }
    do {
        return try JSONValue.parse(buffer.readableBytesView)
    } catch {
        throw RelayHTTPError(validation: ValidationFailure(notJSON: error))
    }
}

/// Whether a `Content-Type` names JSON: `application/json` or a `+json` type under `application/` (RFC 6839), in any
/// case, with any parameters (`; charset=utf-8`); nothing else, so that `application/jsonx` or `text/plain` is 415.
func isJSONMediaType(_ value: String) -> Bool {
    // Over the UTF-8 bytes, without Foundation's trimming and lowercasing or `Character` classes: this runs for every
    // request, and the `String` version was 1.6 % of the relay's CPU per single-message request (`perf record` of
    // `relay-bench relay`'s single-message phase).
    var value = value
    return value.withUTF8(isJSONMediaType(bytes:))
}

private func isJSONMediaType(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    // The essence: before the first `;`, without surrounding spaces and tabs.
    var start = 0
    var end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
    while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
    while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == UInt8(ascii: "\t") { end -= 1 }
    let prefix = "application/".utf8
    guard end - start > prefix.count else { return false }
    for (offset, expected) in prefix.enumerated() where lowercased(bytes[start + offset]) != expected {
        return false
    }
    let subtype = UnsafeBufferPointer(rebasing: bytes[(start + prefix.count)..<end])
    guard subtype.allSatisfy(isRestrictedNameCharacter) else { return false }
    let json = "json".utf8
    let suffix = "+json".utf8
    if subtype.count == json.count { return zip(subtype, json).allSatisfy { lowercased($0) == $1 } }
    return subtype.count > suffix.count
        && zip(subtype[(subtype.count - suffix.count)...], suffix).allSatisfy { lowercased($0) == $1 }
}

private func lowercased(_ byte: UInt8) -> UInt8 {
    (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
}

/// RFC 6838's restricted-name characters: ASCII letters and digits and `!#$&-^_.+`.
private func isRestrictedNameCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "-"),
        UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "+"):
        return true
    default:
        return false
    }
}

/// A `Content-Encoding` the relay inflates.
enum BodyCoding {
    case gzip
    /// RFC 9110's `deflate` is the zlib format (RFC 1950); raw deflate, which some clients send under that name, is
    /// read too, told apart by the zlib header.
    case deflate

    init?(_ encoding: String) {
        switch encoding {
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        default: return nil
        }
    }

    /// The whole inflated body, at most `limit` bytes.
    ///
    /// - Throws: 413 when it inflates beyond `limit`; 400 when it is not one whole stream: corrupt, cut short, or
    ///   followed by anything (a second gzip member included), which another reader of the same body might read
    ///   otherwise.
    func inflate(_ body: ByteBuffer, limit: Int) throws(RelayHTTPError) -> ByteBuffer {
        let name = self == .gzip ? "gzip" : "deflate"
        let algorithm: CompressionAlgorithm
        switch self {
        case .gzip: algorithm = .gzip()
        case .deflate: algorithm = Self.hasZlibHeader(body) ? .zlib() : .deflate()
        }
        var compressed = body
        let inflated: ByteBuffer
        do {
            // Hand-written around CompressNIO's `decompress(with:maxSize:)`, which returns what it inflated without
            // saying whether the stream ended, and leaves whatever follows the end unread.
            let decompressor = algorithm.decompressor
            try decompressor.startStream()
            inflated = try compressed.decompressStream(with: decompressor, maxSize: limit)
            let ended = try Self.streamEnded(decompressor)
            try decompressor.finishStream()
            guard ended else { throw Self.invalid("The \(name) body ends before its compressed stream does.") }
        } catch let error as RelayHTTPError {
            throw error
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw .payloadTooLarge(limit: limit)
        } catch {
            throw Self.invalid("The \(name) body could not be inflated.")
        }
        guard compressed.readableBytes == 0 else {
            throw Self.invalid(
                "The \(name) body has \(compressed.readableBytes) bytes after its compressed stream "
                    + "(a second gzip member, or other data); send one stream."
            )
        }
        return inflated
    }

    /// Whether the decompressor reached the end of its stream: zlib then answers `Z_STREAM_END` and takes no more
    /// input, where a stream cut short takes the byte offered (or fails on it).
    private static func streamEnded(_ decompressor: any NIODecompressor) throws -> Bool {
        var probe = ByteBuffer(bytes: [0])
        var output = ByteBufferAllocator().buffer(capacity: 16)
        do {
            try probe.decompressStream(to: &output, with: decompressor)
        } catch {
            return false
        }
        return probe.readableBytes == 1 && output.readableBytes == 0
    }

    /// RFC 1950: compression method 8 in the low nibble of the first byte, and the first two bytes, big-endian, a
    /// multiple of 31.
    private static func hasZlibHeader(_ body: ByteBuffer) -> Bool {
        guard let first = body.getInteger(at: body.readerIndex, as: UInt8.self),
            let second = body.getInteger(at: body.readerIndex + 1, as: UInt8.self)
        else { return false }
        return first & 0x0F == 8 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
    }

    private static func invalid(_ message: String) -> RelayHTTPError {
        RelayHTTPError(.badRequest, code: .validationError, message: message)
    }
}

/// The tenant key of a request: from the path (`/t/<key>/…`) when it came there, else from the `Authorization` header.
func tenantKey(_ request: Request, _ context: RelayRequestContext) -> String? {
    context.pathKey ?? bearerKey(request)
}

/// The tenant key from `Authorization: Bearer <key>`: the scheme in any case, spaces or tabs around the key.
///
/// Read on every push, so without Foundation's character sets or a lowercased copy.
func bearerKey(_ request: Request) -> String? {
    guard let value = request.headers[.authorization] else { return nil }
    // On the UTF-8 bytes, not by Character (grapheme breaking): 0.4 % of the relay's CPU per single-message request.
    let bytes = value.utf8
    let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    guard let start = bytes.firstIndex(where: { !isBlank($0) }),
        let space = bytes[start...].firstIndex(of: UInt8(ascii: " "))
    else { return nil }
    let scheme = bytes[start..<space]
    // `| 0x20` lowercases an ASCII letter, and only a letter can then equal one of "bearer".
    guard scheme.count == 6, zip(scheme, "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
    guard let first = bytes[space...].firstIndex(where: { !isBlank($0) }),
        let last = bytes[first...].lastIndex(where: { !isBlank($0) })
    else { return nil }
    return String(Substring(bytes[first...last]))
}
