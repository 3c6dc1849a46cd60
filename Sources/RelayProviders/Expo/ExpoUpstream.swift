package import Foundation
package import RelayCore
package import RelayHTTP2

/// Where PushRelay sends to Expo, and with which access token (never printed: see ``description``).
package struct ExpoSenderConfiguration: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    package var payload: PayloadSettings
    package var endpoint: String
    /// Sent as `Authorization: Bearer` when the Expo project has enhanced push security.
    package var accessToken: String?

    package static let endpoint = "https://exp.host"
    /// Expo: at most 100 messages per send request.
    package static let maxMessagesPerRequest = 100
    /// Expo: at most 1,000 ids per receipts request.
    package static let maxReceiptsPerRequest = 1000

    package init(
        payload: PayloadSettings, endpoint: String = ExpoSenderConfiguration.endpoint, accessToken: String? = nil
    ) {
        self.payload = payload
        self.endpoint = endpoint
        self.accessToken = accessToken
    }

    package var description: String {
        "ExpoSenderConfiguration(endpoint: \(endpoint), accessToken: \(accessToken == nil ? "none" : "<redacted>"))"
    }

    package var debugDescription: String { description }

    var headers: [HTTPHeader] {
        var headers = [HTTPHeader("content-type", "application/json"), HTTPHeader("accept", "application/json")]
        if let accessToken { headers.append(HTTPHeader("authorization", "Bearer \(accessToken)")) }
        return headers
    }
}

/// Expo's parts of a sender: up to 100 messages per request, one ticket per message or one error for the whole
/// request, and a ticket `ok` whose outcome comes later with its receipt (``ExpoReceiptPoller``).
package struct ExpoUpstream: ProviderUpstream {
    package static let provider = Provider.expo
    package static let maxMessagesPerRequest = ExpoSenderConfiguration.maxMessagesPerRequest
    package static let deliveryAwaitsReceipt = true
    package let configuration: ExpoSenderConfiguration
    private let endpoint: UpstreamEndpoint

    package init(configuration: ExpoSenderConfiguration, client: HTTP2Client) {
        self.configuration = configuration
        self.endpoint = UpstreamEndpoint(url: configuration.endpoint + "/--/api/v2/push/send", client: client)
    }

    /// Expo's access token, when there is one, is a fixed header of every request (``ExpoSenderConfiguration``):
    /// there is nothing to renew.
    package var credential: (any TokenProvider)? { nil }

    package var payload: PayloadSettings { configuration.payload }

    package func message(for push: ResolvedPush, now: Date) throws(MessageTooBig) -> ExpoMessage {
        try ExpoMessage(push: push, settings: configuration.payload)
    }

    package func endpoint(for message: ExpoMessage) -> UpstreamEndpoint { endpoint }

    package func request(for messages: ArraySlice<ExpoMessage>, token: String?) -> (UpstreamEndpoint, HTTP2Request) {
        let body = JSONValue.array(messages.map { .object($0.json) }).encodedBytes()
        return (endpoint, HTTP2Request(url: endpoint.url, headers: configuration.headers, body: body))
    }

    package func classify(_ response: HTTP2Response, for messages: ArraySlice<ExpoMessage>) -> [AttemptResult] {
        Self.classify(response, count: messages.count)
    }

    /// One result per message: each ticket when the request succeeded, the request's error for all otherwise.
    static func classify(_ response: HTTP2Response, count: Int) -> [AttemptResult] {
        let body = JSONValue.decode(response.body)?.objectValue
        if response.status == 200 {
            guard case .array(let tickets)? = body?["data"], tickets.count == count else {
                let failure = AttemptResult(
                    failure: HTTP2Error(.noResponse, detail: "tickets do not match the messages"))
                return Array(repeating: failure, count: count)
            }
            return tickets.map { ticket in
                let fields = ticket.objectValue ?? [:]
                let status = fields["status"]?.stringValue ?? "error"
                let error = fields["details"]?.objectValue?["error"]?.stringValue
                return AttemptResult(
                    verdict: ExpoClassifier.classifyTicket(
                        status: status,
                        id: fields["id"]?.stringValue,
                        error: error,
                        message: fields["message"]?.stringValue
                    ),
                    status: 200,
                    reason: error
                )
            }
        }
        let first = body?["errors"].flatMap {
            if case .array(let errors) = $0 { errors.first?.objectValue } else { nil }
        }
        let code = first?["code"]?.stringValue
        let transient = first?["isTransient"] == .bool(true)
        let verdict = ExpoClassifier.classifyRequest(
            status: response.status,
            code: code,
            isTransient: transient,
            retryAfter: response.retryAfter
        )
        return Array(repeating: AttemptResult(verdict: verdict, status: response.status, reason: code), count: count)
    }
}
