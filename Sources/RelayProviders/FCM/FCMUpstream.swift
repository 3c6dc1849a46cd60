package import Foundation
package import Logging
package import RelayCore
package import RelayHTTP2

/// FCM's parts of a sender: one request per notification to FCM HTTP v1, with the service account's OAuth access
/// token as its credential.
package struct FCMUpstream: SingleMessageUpstream {
    private let endpoint: UpstreamEndpoint
    package let payload: PayloadSettings
    /// The service account's OAuth access token.
    package let credential: (any TokenProvider)?
    package static let provider = Provider.fcm

    package init(configuration: FCMSenderConfiguration, tokens: FCMAccessTokenProvider, client: HTTP2Client) {
        endpoint = UpstreamEndpoint(url: configuration.endpoint, client: client)
        payload = configuration.payload
        credential = tokens
    }

    package func message(for push: ResolvedPush, now: Date) throws(MessageTooBig) -> FCMRequest {
        try FCMRequest(push: push, settings: payload, now: now)
    }

    package func endpoint(for message: FCMRequest) -> UpstreamEndpoint { endpoint }

    package func request(for message: FCMRequest, token: String?) -> (UpstreamEndpoint, HTTP2Request) {
        var headers: [HTTPHeader] = []
        if let token { headers.append(HTTPHeader("authorization", "Bearer \(token)")) }
        headers.append(HTTPHeader("content-type", "application/json"))
        return (endpoint, HTTP2Request(url: endpoint.url + message.path, headers: headers, body: message.body))
    }

    package func classify(_ response: HTTP2Response, for message: FCMRequest) -> AttemptResult {
        Self.classify(response)
    }

    /// Reads a `google.rpc.Status` error body, or the success body's message name.
    static func classify(_ response: HTTP2Response) -> AttemptResult {
        let body = JSONValue.decode(response.body)?.objectValue
        if response.status == 200 {
            guard let name = body?["name"]?.stringValue else {
                return AttemptResult(failure: HTTP2Error(.noResponse, detail: "200 without a message name"))
            }
            return AttemptResult(verdict: .final(.delivered(providerMessageID: name)), status: 200)
        }
        let error = body?["error"]?.objectValue
        let errorCode = error.flatMap { firstErrorCode(in: $0["details"]) }
        let rpcStatus = error?["status"]?.stringValue
        let verdict = FCMClassifier.classify(
            status: response.status,
            errorCode: errorCode,
            rpcStatus: rpcStatus,
            message: error?["message"]?.stringValue,
            retryAfter: response.retryAfter
        )
        return AttemptResult(verdict: verdict, status: response.status, reason: errorCode ?? rpcStatus)
    }

    /// The first `errorCode` among a `google.rpc.Status`'s `details`, read only when they are all objects.
    private static func firstErrorCode(in details: JSONValue?) -> String? {
        guard case .array(let details)? = details else { return nil }
        let objects = details.compactMap(\.objectValue)
        guard objects.count == details.count else { return nil }
        return objects.lazy.compactMap { $0["errorCode"]?.stringValue }.first
    }

    package func log(_ report: DeliveryReport, of message: FCMRequest, to logger: Logger) {
        guard case .configurationError = report.outcome else { return }
        logger.warning(
            "FCM refused the operator's configuration",
            metadata: ["fcm.error": "\(report.upstreamReason ?? "")"]
        )
    }
}
