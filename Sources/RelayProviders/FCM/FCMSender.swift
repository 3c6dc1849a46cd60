import Foundation
package import Logging
package import RelayCore
package import RelayHTTP2

/// Where PushRelay sends to FCM.
package struct FCMSenderConfiguration: Sendable {
    package var payload: PayloadSettings
    package var endpoint: String

    package static let endpoint = "https://fcm.googleapis.com"

    package init(payload: PayloadSettings, endpoint: String = FCMSenderConfiguration.endpoint) {
        self.payload = payload
        self.endpoint = endpoint
    }
}

/// Sends to FCM HTTP v1 with the service account's OAuth access token.
package struct FCMSender: PushSender {
    package let provider = Provider.fcm
    package let configuration: FCMSenderConfiguration
    package let tokens: FCMAccessTokenProvider
    private let client: HTTP2Client
    private let retries: RetryLoop
    private let environment: SenderEnvironment
    private let logger: Logger

    package init(
        configuration: FCMSenderConfiguration,
        tokens: FCMAccessTokenProvider,
        client: HTTP2Client,
        retries: RetryLoop = RetryLoop(),
        environment: SenderEnvironment = .live,
        logger: Logger = Logger(label: "pushrelay.fcm")
    ) {
        self.configuration = configuration
        self.tokens = tokens
        self.client = client
        self.retries = retries
        self.environment = environment
        self.logger = logger
    }

    package func send(_ pushes: [ResolvedPush]) async -> [DeliveryReport] {
        await concurrentMap(pushes) { push in await self.send(push) }
    }

    package func send(_ push: ResolvedPush) async -> DeliveryReport {
        let request: FCMRequest
        do {
            request = try FCMRequest(push: push, settings: configuration.payload, now: environment.now())
        } catch {
            return DeliveryReport(outcome: .rejected(.messageTooBig, reason: error.description), attempts: 0)
        }
        var lastToken: String?
        let report = await retries.deliver(environment: environment) { instructions in
            let token: String
            do {
                if instructions.renewCredential, let lastToken {
                    token = try await tokens.tokenRefused(lastToken)
                } else {
                    token = try await tokens.token()
                }
            } catch {
                return transportFailure(error)
            }
            lastToken = token
            let upstream = HTTP2Request(
                url: configuration.endpoint + request.path,
                headers: [HTTPHeader("authorization", "Bearer \(token)"), HTTPHeader("content-type", "application/json")],
                body: request.body
            )
            do {
                return Self.classify(try await client.send(upstream))
            } catch {
                return transportFailure(error)
            }
        }
        if case .configurationError = report.outcome {
            logger.warning(
                "FCM refused the operator's configuration",
                metadata: ["fcm.error": "\(report.upstreamReason ?? "")"]
            )
        }
        return report
    }

    /// Reads a `google.rpc.Status` error body, or the success body's message name.
    static func classify(_ response: HTTP2Response) -> AttemptResult {
        let body = JSONValue.decode(response.body)?.objectValue
        if response.status == 200 {
            guard let name = body?["name"]?.stringValue else {
                return transportFailure(HTTP2Error(.noResponse, detail: "200 without a message name"))
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
            retryAfter: retryAfter(response.header("retry-after"))
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
}
