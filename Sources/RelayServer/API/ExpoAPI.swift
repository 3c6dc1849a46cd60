import HTTPTypes
import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

/// The Expo-compatible API: Expo's own request and response shapes, so that a stock Expo server SDK pointed at the
/// relay works unchanged. Any token kind is accepted and routed to its provider.
struct ExpoAPI: Sendable {
    let relay: Relay

    /// Expo message fields and their native names: every field of Expo's message format (PROTOCOLS.md §3.1).
    static let fieldMap: [String: String] = [
        "to": "to", "title": "title", "subtitle": "subtitle", "body": "body", "data": "data", "sound": "sound",
        "badge": "badge", "ttl": "ttl", "expiration": "expiration", "priority": "priority", "channelId": "channelId",
        "categoryId": "categoryId", "mutableContent": "mutableContent", "_contentAvailable": "contentAvailable",
        "interruptionLevel": "interruptionLevel", "collapseId": "collapseId", "icon": "icon",
        // Extensions with the native names (Expo's own service has none of these): Live Activities and the alert
        // fields of APNs and FCM that Expo lacks; a message to an Expo token with one is refused by name.
        "liveActivity": "liveActivity", "relevanceScore": "relevanceScore", "titleLocKey": "titleLocKey",
        "titleLocArgs": "titleLocArgs", "subtitleLocKey": "subtitleLocKey", "subtitleLocArgs": "subtitleLocArgs",
        "bodyLocKey": "bodyLocKey", "bodyLocArgs": "bodyLocArgs", "launchImage": "launchImage",
        "targetContentId": "targetContentId", "filterCriteria": "filterCriteria", "clickAction": "clickAction",
        "notificationCount": "notificationCount", "visibility": "visibility", "color": "color",
        "notificationPriority": "notificationPriority", "directBootOk": "directBootOk",
    ]

    /// Older names Expo still takes, and the field each stands for; the current name wins when both are given.
    static let legacyAliases: [String: String] = ["_category": "categoryId", "tag": "collapseId"]

    /// Fields Expo's SDKs and older apps still send that have no effect on Expo's service any more, accepted and
    /// dropped (Docs/api.md lists them): `_displayInForeground` (foreground display is the app's handler since
    /// SDK 38), and `experienceId` and `scopeKey` (Expo finds the project from the token).
    static let ignoredFields: Set<String> = ["_displayInForeground", "experienceId", "scopeKey"]

    func addRoutes(to router: RouterGroup<TenantRequestContext>) {
        router.post("/--/api/v2/push/send") { request, context in try await send(request, context: context) }
        router.post("/--/api/v2/push/getReceipts") { request, context in try await receipts(request, context: context) }
    }

    func send(_ request: Request, context: TenantRequestContext) async throws -> Response {
        let identity = context.identity
        let json = try await readJSONBody(request, limit: relay.settings.maxBodyBytes)
        let (pushes, unwrapped) = try Self.parse(json)
        if RequestPreferences(request.headers).dryRun {
            return try await DryRunAPI.respond(pushes, relay: relay, context: context, preferenceApplied: true) {
                DryRunAPI.expoJSON($0, unwrapped: unwrapped)
            }
        }
        let result = try await rendered { () async throws(RequestRefusal) in
            try await relay.push(pushes, identity: identity, origin: context.origin, logger: context.logger)
        }
        let tickets = result.tickets.map(\.expoJSON)
        // Expo answers a single unwrapped message to one recipient with a bare ticket.
        let data: JSONValue = unwrapped && tickets.count == 1 ? tickets[0] : .array(tickets)
        return jsonResponse(.object(["data": data]), headers: result.rateLimit.headers)
    }

    func receipts(_ request: Request, context: TenantRequestContext) async throws -> Response {
        let identity = context.identity
        let ids = try NativeAPI.parseIDs(try await readJSONBody(request, limit: relay.settings.maxBodyBytes))
        let found = try await rendered { () async throws(RequestRefusal) in
            try await relay.receipts(ids: ids, identity: identity)
        }
        // Expo leaves out receipts that are not ready.
        let ready = found.filter { $0.status != .pending }
        return jsonResponse(
            .object([
                "data": .object(Dictionary(ready.map { ($0.id, $0.expoJSON) }, uniquingKeysWith: { first, _ in first }))
            ]))
    }

    /// An Expo request body (one message or an array) as validated pushes; `unwrapped` when it was one object.
    static func parse(_ json: JSONValue) throws(RelayHTTPError) -> (pushes: [ResolvedPush], unwrapped: Bool) {
        let elements: [JSONValue]
        let unwrapped: Bool
        switch json {
        case .array(let array): (elements, unwrapped) = (array, false)
        case .object: (elements, unwrapped) = ([json], true)
        default:
            throw RelayHTTPError(
                validation: ValidationFailure(issues: [
                    ValidationIssue(
                        path: "", message: "the request body must be a message object or an array of messages")
                ]))
        }
        var issues: [ValidationIssue] = []
        var pushes: [ResolvedPush] = []
        var omitted = 0
        for (index, element) in elements.enumerated() {
            defer { ValidationFailure.trim(&issues, omitted: &omitted) }
            let path = unwrapped ? JSONPath.root : JSONPath.root.appending(index)
            let known = issues.count
            guard let native = translate(element, at: path, issues: &issues) else { continue }
            var found: [ValidationIssue] = []
            if let message = PushMessage.parse(native, at: path, issues: &found) { pushes += message.pushes }
            // A field refused here is missing from the translation, so the message may look empty to the parser:
            // that is not a problem of its own.
            issues += issues.count > known ? found.filter { $0.path != path.description } : found
        }
        if issues.isEmpty && pushes.count > PushRequest.maxNotifications {
            issues.append(
                ValidationIssue(
                    path: "",
                    message:
                        "a request carries at most \(PushRequest.maxNotifications) notifications, not \(pushes.count)"))
        }
        guard issues.isEmpty else {
            throw RelayHTTPError(validation: ValidationFailure(issues: issues, omitted: omitted))
        }
        return (pushes, unwrapped)
    }

    /// Renames Expo's fields to the native ones; `richContent.image` becomes `image`.
    static func translate(_ json: JSONValue, at path: JSONPath, issues: inout [ValidationIssue]) -> JSONValue? {
        guard case .object(let object) = json else {
            issues.append(ValidationIssue(path, "must be an object, not \(json.typeName)"))
            return nil
        }
        var native: [String: JSONValue] = [:]
        for (key, value) in object {
            if let name = fieldMap[key] {
                native[name] = value
            } else if let name = legacyAliases[key] {
                if let current = fieldMap.first(where: { $0.value == name })?.key, object[current] != nil { continue }
                native[name] = value
            } else if ignoredFields.contains(key) {
                continue
            } else if key == "richContent" {
                guard case .object(let rich) = value, rich.keys.allSatisfy({ $0 == "image" }) else {
                    issues.append(ValidationIssue(path.appending(key), "must be an object {image}"))
                    continue
                }
                if let image = rich["image"] { native["image"] = image }
            } else {
                issues.append(ValidationIssue(path.appending(key), "unknown or unsupported Expo field '\(key)'"))
            }
        }
        return .object(native)
    }
}

extension Ticket {
    /// Expo's ticket shape. A notification still pending is, for Expo's vocabulary, accepted: `ok` with the receipt id.
    var expoJSON: JSONValue {
        switch state {
        case .ok, .pending:
            return .object(["status": .string("ok"), "id": .string(id)])
        case .unrecorded:
            return .object([
                "status": .string("error"), "id": .string(id), "message": .string(Ticket.unrecordedMessage),
                "details": .object(["error": .string(Ticket.unrecordedCode)]),
            ])
        case .error(let code, let message, _, _):
            return .object([
                "status": .string("error"), "id": .string(id), "message": .string(message),
                "details": .object(["error": .string(code.expoCode(message: message))]),
            ])
        }
    }
}

extension Receipt {
    var expoJSON: JSONValue {
        if status == .ok { return .object(["status": .string("ok")]) }
        return .object([
            "status": .string("error"), "message": .string(message ?? ""),
            "details": .object(["error": .string((code ?? .providerUnavailable).expoCode(message: message))]),
        ])
    }
}
