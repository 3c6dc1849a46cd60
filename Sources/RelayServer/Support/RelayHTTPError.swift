package import HTTPTypes
package import Hummingbird
import NIOCore
import RelayApplication
package import RelayCore

/// An error that renders as PushRelay's JSON error body: `{"errors": [{"code", "message", "path"?}]}`.
///
/// Every response body of the relay is JSON, errors included; anything that is not one of these becomes a bare 500
/// (which no input should be able to cause).
package struct RelayHTTPError: HTTPResponseError, Sendable {
    /// Every error code the relay's JSON errors carry, spelt once (api.md's error table lists them).
    package enum Code: String, Sendable, CaseIterable {
        case unauthorized = "UNAUTHORIZED"
        case forbidden = "FORBIDDEN"
        case tenantDisabled = "TENANT_DISABLED"
        case validationError = "VALIDATION_ERROR"
        case unsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
        case payloadTooLarge = "PAYLOAD_TOO_LARGE"
        case notFound = "NOT_FOUND"
        case methodNotAllowed = "METHOD_NOT_ALLOWED"
        /// Another HTTP error Hummingbird raised before a route ran.
        case httpError = "HTTP_ERROR"
        case conflict = "CONFLICT"
        case tooManyRequests = "TOO_MANY_REQUESTS"
        case tooManyAuthenticationFailures = "TOO_MANY_AUTHENTICATION_FAILURES"
        case tooManyConnections = "TOO_MANY_CONNECTIONS"
        case shuttingDown = "SHUTTING_DOWN"
        case queueFull = "QUEUE_FULL"
        case storeUnavailable = "STORE_UNAVAILABLE"
        case internalError = "INTERNAL_ERROR"
    }

    package struct Entry: Sendable, Encodable {
        /// The ``Code``'s spelling.
        package var code: String
        package var message: String
        package var path: String?
    }

    package var status: HTTPResponse.Status
    package var entries: [Entry]
    /// Errors found beyond the ones listed (``ValidationFailure/maximumIssues``), rendered as `omittedErrors`.
    package var omitted = 0
    package var headers: HTTPFields

    package init(_ status: HTTPResponse.Status, code: Code, message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.entries = [Entry(code: code.rawValue, message: message, path: nil)]
        self.headers = headers
    }

    package init(validation failure: ValidationFailure) {
        self.status = .badRequest
        self.entries = failure.issues.map {
            Entry(code: Code.validationError.rawValue, message: $0.message, path: $0.path.isEmpty ? nil : $0.path)
        }
        self.omitted = failure.omitted
        self.headers = [:]
    }

    package static let unauthorized = RelayHTTPError(
        .unauthorized,
        code: .unauthorized,
        message: "A valid tenant key is required (Authorization: Bearer prk_…).",
        headers: [.wwwAuthenticate: "Bearer"]
    )
    package static let tenantDisabled = RelayHTTPError(
        .forbidden,
        code: .tenantDisabled,
        message: "This tenant is disabled; ask the relay's operator."
    )
    package static let shuttingDown = RelayHTTPError(
        .serviceUnavailable,
        code: .shuttingDown,
        message: "The relay is shutting down; try again shortly.",
        headers: [.retryAfter: "5"]
    )
    /// The store did not answer or refused a write the answer depends on.
    package static let storeUnavailable = RelayHTTPError(
        .serviceUnavailable, code: .storeUnavailable, message: "The relay's store is unavailable."
    )

    /// Too many failed authentications from the caller's address (``AuthenticationFailures``).
    package static func authenticationFailures(retryAfter: Double) -> RelayHTTPError {
        let seconds = max(1, Int(retryAfter.rounded(.up)))
        return RelayHTTPError(
            .tooManyRequests,
            code: .tooManyAuthenticationFailures,
            message: "Too many requests without a valid key from this address; retry after \(seconds) s.",
            headers: [.retryAfter: String(seconds)]
        )
    }

    /// The listener holds `[server] max_connections` connections: sent by ``ConnectionRefusalHandler`` on a plain
    /// HTTP/1.1 connection accepted beyond the cap, before its request is read.
    package static let tooManyConnections = RelayHTTPError(
        .serviceUnavailable,
        code: .tooManyConnections,
        message: "The relay has as many connections open as it may; try again shortly.",
        headers: [.retryAfter: "5"]
    )

    package static let notFound = RelayHTTPError(.notFound, code: .notFound, message: "No such route.")

    package static func payloadTooLarge(limit: Int) -> RelayHTTPError {
        RelayHTTPError(.contentTooLarge, code: .payloadTooLarge, message: "The request body exceeds \(limit) bytes.")
    }

    package static let unsupportedMediaType = RelayHTTPError(
        .unsupportedMediaType,
        code: .unsupportedMediaType,
        message: "Send the body as JSON (Content-Type: application/json)."
    )

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: self.body)))
    }

    /// The JSON body: `{"errors": [{"code", "message", "path"?}], "omittedErrors"?}`.
    package var body: [UInt8] {
        var body: [String: JSONValue] = [
            "errors": .array(
                entries.map { entry in
                    var fields: [String: JSONValue] = ["code": .string(entry.code), "message": .string(entry.message)]
                    if let path = entry.path { fields["path"] = .string(path) }
                    return .object(fields)
                }
            )
        ]
        if omitted > 0 { body["omittedErrors"] = .int(Int64(omitted)) }
        return JSONValue.object(body).encodedBytes()
    }
}

/// A JSON response body.
package func jsonResponse(
    _ value: JSONValue,
    status: HTTPResponse.Status = .ok,
    headers: HTTPFields = [:]
) -> Response {
    jsonResponse(bytes: value.encodedBytes(), status: status, headers: headers)
}

/// A JSON response whose body is already encoded.
package func jsonResponse(
    bytes: [UInt8],
    status: HTTPResponse.Status = .ok,
    headers: HTTPFields = [:]
) -> Response {
    var headers = headers
    headers[.contentType] = "application/json; charset=utf-8"
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
}
