import CompressNIO
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
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
            throw RelayHTTPError(.badRequest, code: "VALIDATION_ERROR", message: "The \(encoding) body could not be inflated.")
        }
    }
    guard let json = JSONValue.decode(buffer.readableBytesView) else {
        throw RelayHTTPError(validation: ValidationFailure(issues: [ValidationIssue(path: "", message: "the request body is not valid JSON")]))
    }
    return json
}

/// The tenant key from `Authorization: Bearer <key>`.
func bearerKey(_ request: Request) -> String? {
    guard let value = request.headers[.authorization] else { return nil }
    let parts = value.split(separator: " ", maxSplits: 1)
    guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
    return parts[1].trimmingCharacters(in: .whitespaces)
}
