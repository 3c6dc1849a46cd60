package import Foundation
package import Logging
package import RelayCore
package import RelayHTTP2

/// APNs's parts of a sender: one request per notification, the provider token as its credential, and one pool per
/// environment and signing key (APNs binds a connection to the first key used on it). A message keeps its `apns-id`
/// across retries, so APNs and the audit log see one message, not several.
package struct APNsUpstream: SingleMessageUpstream {
    package static let provider = Provider.apns
    /// The provider token of the signing key.
    package let credential: (any TokenProvider)?
    package let payload: PayloadSettings
    private let production: UpstreamEndpoint
    private let sandbox: UpstreamEndpoint

    package init(configuration: APNsSenderConfiguration, tokens: APNsTokenProvider, client: HTTP2Client) {
        // The credential names the pool: APNs binds a connection to the first key and environment used on it.
        let key = "\(tokens.teamID):\(tokens.keyID)"
        production = UpstreamEndpoint(
            url: configuration.productionEndpoint,
            credential: "apns:\(APNsEnvironment.production.rawValue):\(key)",
            client: client
        )
        sandbox = UpstreamEndpoint(
            url: configuration.sandboxEndpoint,
            credential: "apns:\(APNsEnvironment.sandbox.rawValue):\(key)",
            client: client
        )
        payload = configuration.payload
        credential = tokens
    }

    package func message(for push: ResolvedPush, now: Date) throws(MessageTooBig) -> APNsRequest {
        try APNsRequest(push: push, settings: payload, now: now, apnsID: push.apnsID ?? UUID.random())
    }

    /// The pushes of one message (its `to` list) share their payload: it is encoded once, for the first of them
    /// (`relay-bench relay`, batched phase: building the payload was about 3 % of the relay's CPU per notification).
    /// Two pushes come from the same message when their messages are equal; those of one `to` list share their
    /// storage, so the comparison ends at the first field.
    package func message(
        for push: ResolvedPush,
        now: Date,
        following previous: (push: ResolvedPush, message: APNsRequest)?
    ) throws(MessageTooBig) -> APNsRequest {
        guard let previous, previous.push.pushType == push.pushType, previous.push.isCritical == push.isCritical,
            previous.push.message == push.message
        else { return try message(for: push, now: now) }
        return try APNsRequest(
            push: push, settings: payload, now: now, apnsID: push.apnsID ?? UUID.random(), body: previous.message.body)
    }

    package func endpoint(for message: APNsRequest) -> UpstreamEndpoint {
        message.environment == .production ? production : sandbox
    }

    package func request(for message: APNsRequest, token: String?) -> (UpstreamEndpoint, HTTP2Request) {
        let endpoint = endpoint(for: message)
        var headers = message.headers.map { HTTPHeader($0.name, $0.value) }
        if let token { headers.append(HTTPHeader("authorization", "bearer \(token)")) }
        headers.append(HTTPHeader("content-type", "application/json"))
        return (endpoint, HTTP2Request(url: endpoint.url + message.path, headers: headers, body: message.body))
    }

    package func classify(_ response: HTTP2Response, for message: APNsRequest) -> AttemptResult {
        Self.classify(response, sentAPNsID: message.apnsID)
    }

    /// The pool reports a response only when its stream ended with END_STREAM, so a 200 is a delivery, with the
    /// `apns-id` APNs echoed or, without one, the id the relay sent. An error needs a readable reason (below 500):
    /// anything else is retried as a transport failure.
    static func classify(_ response: HTTP2Response, sentAPNsID: String) -> AttemptResult {
        let apnsID = response.header("apns-id") ?? sentAPNsID
        if response.status == 200 {
            return AttemptResult(
                verdict: APNsClassifier.classify(status: 200, reason: nil, apnsID: apnsID), status: 200)
        }
        let body = JSONValue.decode(response.body)?.objectValue
        let reason = body?["reason"]?.stringValue
        if reason == nil && response.status < 500 {
            return AttemptResult(failure: HTTP2Error(.noResponse, detail: "HTTP \(response.status) without a reason"))
        }
        let timestamp = body?["timestamp"]?.integerValue
        return AttemptResult(
            verdict: APNsClassifier.classify(
                status: response.status, reason: reason, timestamp: timestamp, apnsID: apnsID,
                retryAfter: response.retryAfter),
            status: response.status,
            reason: reason
        )
    }

    /// No provider token could be signed: the key is the operator's.
    package func credentialFailure(_ error: any Error) -> AttemptResult {
        AttemptResult(verdict: .final(.configurationError(reason: "APNs key: \(error)")), reason: "key")
    }

    package func log(_ report: DeliveryReport, of message: APNsRequest, to logger: Logger) {
        // The metadata is an autoclosure: built only when the level is logged.
        if case .configurationError = report.outcome {
            logger.warning("APNs refused the operator's configuration", metadata: Self.metadata(report, message))
        } else {
            logger.debug("APNs push finished", metadata: Self.metadata(report, message))
        }
    }

    private static func metadata(_ report: DeliveryReport, _ message: APNsRequest) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "apns.id": "\(message.apnsID)", "push.outcome": "\(report.outcome.shortDescription)",
            "push.attempts": "\(report.attempts)",
        ]
        if let reason = report.upstreamReason { metadata["apns.reason"] = "\(reason)" }
        return metadata
    }
}
