import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
package import RelayApplication
import RelayCore

/// Reads a request's JSON body: media type, size limit, gzip, and JSON syntax, each with its own clear error.
func readJSONBody(_ request: Request, limit: Int) async throws(RelayHTTPError) -> JSONValue {
    if let type = request.headers[.contentType]?.lowercased(), !type.hasPrefix("application/json"),
        !type.hasPrefix("text/json")
    {
        throw .unsupportedMediaType
    }
    var request = request
    var buffer: ByteBuffer
    do {
        buffer = try await request.collectBody(upTo: limit)
    } catch {
        throw .payloadTooLarge(limit: limit)
    }
    if let encoding = request.headers[.contentEncoding]?.lowercased(), encoding != "identity" {
        guard encoding == "gzip" || encoding == "deflate" else {
            throw RelayHTTPError(
                .unsupportedMediaType,
                code: "UNSUPPORTED_MEDIA_TYPE",
                message: "Content-Encoding \(encoding) is not supported; send gzip, deflate or none."
            )
        }
        do {
            buffer = try buffer.decompress(with: encoding == "gzip" ? .gzip() : .deflate(), maxSize: limit)
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw .payloadTooLarge(limit: limit)
        } catch {
            throw RelayHTTPError(
                .badRequest, code: "VALIDATION_ERROR", message: "The \(encoding) body could not be inflated.")
        }
    }
    do {
        return try JSONValue.parse(buffer.readableBytesView)
    } catch {
        throw RelayHTTPError(validation: ValidationFailure(notJSON: error))
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
    let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    let field = value.drop(while: blank)
    guard let space = field.firstIndex(of: " ") else { return nil }
    let scheme = field[..<space].utf8
    // `| 0x20` lowercases an ASCII letter, and only a letter can then equal one of "bearer".
    guard scheme.count == 6, zip(scheme, "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
    var key = field[space...].drop(while: blank)
    while let last = key.last, blank(last) { key.removeLast() }
    return key.isEmpty ? nil : String(key)
}
