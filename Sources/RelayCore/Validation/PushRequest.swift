package import Foundation

/// The native API's request body: `{"messages": [message, …]}`, with `"dryRun": true` for a dry run.
package struct PushRequest: Sendable, Equatable {
    /// At most this many notifications (tokens, over all messages) in one request.
    package static let maxNotifications = 100

    package var messages: [ValidatedMessage]
    /// `"dryRun": true`: answer what would be sent, send and admit nothing.
    package var dryRun = false

    /// Every notification of the request, in request order.
    package var pushes: [ResolvedPush] { messages.flatMap(\.pushes) }

    /// Parses and validates a request body.
    ///
    /// - Parameter apps: The relay's apps; a message naming another `app` is refused (`messages[i].app`). `nil`
    ///   checks only the name's form.
    /// - Throws: ``ValidationFailure`` with every problem of the request, each with its path.
    package static func parse(
        _ body: some DataProtocol,
        apps: Set<String>? = nil
    ) throws(ValidationFailure) -> PushRequest {
        let json: JSONValue
        do {
            json = try JSONValue.parse(body)
        } catch {
            throw ValidationFailure(notJSON: error)
        }
        return try parse(json, apps: apps)
    }

    /// Parses and validates a request already decoded as JSON; `apps` as for the body's `parse`.
    package static func parse(_ json: JSONValue, apps: Set<String>? = nil) throws(ValidationFailure) -> PushRequest {
        guard case .object(let object) = json else {
            throw ValidationFailure(issues: [
                ValidationIssue(path: "", message: "the request body must be an object {\"messages\": […]}")
            ])
        }
        var reader = ObjectReader(object, at: .root)
        reader.rejectUnknownKeys(["messages", "dryRun"])
        let dryRun = reader.bool("dryRun") ?? false
        var issues = reader.issues
        let path = JSONPath("messages")
        guard case .array(let elements)? = object["messages"] else {
            let got = object["messages"].map { ", not \($0.typeName)" } ?? ""
            issues.append(ValidationIssue(path, "is required: an array of 1 or more messages\(got)"))
            throw ValidationFailure(issues: issues)
        }
        if elements.isEmpty {
            issues.append(ValidationIssue(path, "must hold at least one message"))
        }
        var messages: [ValidatedMessage] = []
        var omitted = 0
        for (index, element) in elements.enumerated() {
            if let message = PushMessage.parse(element, at: path.appending(index), issues: &issues) {
                if let app = message.message.app, let apps, !apps.contains(app) {
                    issues.append(
                        ValidationIssue(path.appending(index).appending("app"), "is not an app of this relay"))
                } else {
                    messages.append(message)
                }
            }
            ValidationFailure.trim(&issues, omitted: &omitted)
        }
        let notifications = elements.reduce(0) { count, element in
            switch element.objectValue?["to"] {
            case .array(let tokens)?: count + tokens.count
            case .string?: count + 1
            default: count
            }
        }
        if notifications > maxNotifications {
            issues.append(
                ValidationIssue(
                    path, "a request carries at most \(maxNotifications) notifications, not \(notifications)")
            )
        }
        guard issues.isEmpty else { throw ValidationFailure(issues: issues, omitted: omitted) }
        return PushRequest(messages: messages, dryRun: dryRun)
    }
}
