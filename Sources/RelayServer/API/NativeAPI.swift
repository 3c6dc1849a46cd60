import Foundation
import HTTPTypes
import Hummingbird
import Logging
import RelayCore
import RelayStore
package import RelayApplication

/// The native API: `POST /v1/push` and `POST /v1/receipts`.
struct NativeAPI: Sendable {
    let relay: Relay

    /// At most this many ids per receipts request.
    static let maxReceiptIDs = 1000

    func addRoutes(to router: Router<RelayRequestContext>) {
        router.post("/v1/push") { request, context in try await push(request, context: context) }
        router.post("/v1/receipts") { request, context in try await receipts(request, context: context) }
    }

    func push(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let identity = try await relay.identity(of: request, context)
        let json = try await readJSONBody(request, limit: relay.settings.maxBodyBytes)
        let parsed: PushRequest
        do {
            parsed = try PushRequest.parse(json)
        } catch {
            throw RelayHTTPError(validation: error)
        }
        let result = try await rendered { () async throws(RequestRefusal) in try await relay.push(parsed.pushes, identity: identity, trail: context.trail, logger: context.logger) }
        return jsonResponse(.object(["data": .array(result.tickets.map(\.nativeJSON))]), headers: result.rateLimit.headers)
    }

    func receipts(_ request: Request, context: RelayRequestContext) async throws -> Response {
        let identity = try await relay.identity(of: request, context)
        let ids = try Self.parseIDs(try await readJSONBody(request, limit: relay.settings.maxBodyBytes))
        let found = try await rendered { () async throws(RequestRefusal) in try await relay.receipts(ids: ids, identity: identity) }
        return jsonResponse(.object(["data": .object(Dictionary(found.map { ($0.id, $0.nativeJSON) }, uniquingKeysWith: { first, _ in first }))]))
    }

    /// `{"ids": [...]}` with 1 to 1,000 strings.
    static func parseIDs(_ json: JSONValue) throws(RelayHTTPError) -> [String] {
        func fail(_ path: String, _ message: String) -> RelayHTTPError {
            RelayHTTPError(validation: ValidationFailure(issues: [ValidationIssue(path: path, message: message)]))
        }
        guard case .object(let object) = json else { throw fail("", "the request body must be an object {\"ids\": […]}") }
        if let unknown = object.keys.sorted().first(where: { $0 != "ids" }) { throw fail(unknown, "unknown field '\(unknown)'") }
        guard case .array(let elements)? = object["ids"] else { throw fail("ids", "is required: an array of receipt ids") }
        guard (1...maxReceiptIDs).contains(elements.count) else {
            throw fail("ids", "must hold 1 to \(maxReceiptIDs) ids, not \(elements.count)")
        }
        var ids: [String] = []
        var seen: Set<String> = []
        for (index, element) in elements.enumerated() {
            guard let id = element.stringValue else { throw fail("ids[\(index)]", "must be a string") }
            // An id asked for twice is answered once.
            if seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }
}

extension Receipt {
    /// The native API's receipt JSON.
    var nativeJSON: JSONValue {
        var fields: [String: JSONValue] = [
            "status": .string(status.rawValue), "provider": .string(provider.rawValue),
            "critical": .bool(isCritical), "updatedAt": .string(updatedAt.formatted(.iso8601)),
        ]
        if let providerMessageID { fields["providerMessageId"] = .string(providerMessageID) }
        if status == .error {
            if let message { fields["message"] = .string(message) }
            fields["details"] = .object(["error": .string(errorCode ?? "ProviderError"), "removeToken": .bool(removeToken)])
        }
        return .object(fields)
    }
}

extension Ticket {
    /// The native API's ticket JSON.
    var nativeJSON: JSONValue {
        var fields: [String: JSONValue] = ["id": .string(id), "provider": .string(provider.rawValue)]
        switch state {
        case .ok(let messageID):
            fields["status"] = .string("ok")
            if let messageID { fields["providerMessageId"] = .string(messageID) }
        case .pending:
            fields["status"] = .string("pending")
        case .error(let code, let message, let removeToken, let retryAfter):
            fields["status"] = .string("error")
            fields["message"] = .string(message)
            var details: [String: JSONValue] = ["error": .string(code), "removeToken": .bool(removeToken)]
            if let retryAfter { details["retryAfter"] = .int(Int64(retryAfter)) }
            fields["details"] = .object(details)
        }
        return .object(fields)
    }
}
