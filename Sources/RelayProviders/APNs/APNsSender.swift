import Foundation
package import Logging
package import RelayCore
package import RelayHTTP2

/// Where and as whom PushRelay sends to APNs.
package struct APNsSenderConfiguration: Sendable {
    package var payload: PayloadSettings
    package var productionEndpoint: String
    package var sandboxEndpoint: String

    package static let productionEndpoint = "https://api.push.apple.com"
    package static let sandboxEndpoint = "https://api.sandbox.push.apple.com"

    package init(
        payload: PayloadSettings,
        productionEndpoint: String = APNsSenderConfiguration.productionEndpoint,
        sandboxEndpoint: String = APNsSenderConfiguration.sandboxEndpoint
    ) {
        self.payload = payload
        self.productionEndpoint = productionEndpoint
        self.sandboxEndpoint = sandboxEndpoint
    }
}

/// Sends to APNs with token authentication over the HTTP/2 pool.
///
/// Each environment and signing key has its own pool (APNs binds a connection to the first key used on it). A
/// message keeps its `apns-id` across retries, so APNs and the audit log see one message, not several.
package struct APNsSender: PushSender {
    package let provider = Provider.apns
    package let configuration: APNsSenderConfiguration
    package let tokens: APNsTokenProvider
    private let client: HTTP2Client
    private let retries: RetryLoop
    private let environment: SenderEnvironment
    private let logger: Logger

    package init(
        configuration: APNsSenderConfiguration,
        tokens: APNsTokenProvider,
        client: HTTP2Client,
        retries: RetryLoop = RetryLoop(),
        environment: SenderEnvironment = .live,
        logger: Logger = Logger(label: "pushrelay.apns")
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

    /// Sends one push, retrying as its answers allow.
    package func send(_ push: ResolvedPush) async -> DeliveryReport {
        let request: APNsRequest
        do {
            request = try APNsRequest(
                push: push,
                settings: configuration.payload,
                now: environment.now(),
                apnsID: UUID.random()
            )
        } catch {
            return DeliveryReport(outcome: .rejected(.messageTooBig, reason: error.description), attempts: 0)
        }
        let endpoint =
            request.environment == .production ? configuration.productionEndpoint : configuration.sandboxEndpoint
        let credential = "apns:\(request.environment.rawValue):\(tokens.teamID):\(tokens.keyID)"
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
                return AttemptResult(verdict: .final(.configurationError(reason: "APNs key: \(error)")), reason: "key")
            }
            lastToken = token
            var headers = request.headers.map { HTTPHeader($0.name, $0.value) }
            headers.append(HTTPHeader("authorization", "bearer \(token)"))
            headers.append(HTTPHeader("content-type", "application/json"))
            let upstream = HTTP2Request(
                url: endpoint + request.path,
                headers: headers,
                body: request.body,
                freshConnection: instructions.freshConnection
            )
            do {
                return Self.classify(try await client.send(upstream, credential: credential), sentAPNsID: request.apnsID)
            } catch {
                return transportFailure(error)
            }
        }
        log(report, apnsID: request.apnsID)
        return report
    }

    /// The pool reports a response only when its stream ended with END_STREAM, so a 200 is a delivery, with the
    /// `apns-id` APNs echoed or, without one, the id the relay sent. An error needs a readable reason (below 500):
    /// anything else is retried as a transport failure.
    static func classify(_ response: HTTP2Response, sentAPNsID: String) -> AttemptResult {
        let apnsID = response.header("apns-id") ?? sentAPNsID
        if response.status == 200 {
            return AttemptResult(verdict: APNsClassifier.classify(status: 200, reason: nil, apnsID: apnsID), status: 200)
        }
        let body = JSONValue.decode(response.body)?.objectValue
        let reason = body?["reason"]?.stringValue
        if reason == nil && response.status < 500 {
            return transportFailure(HTTP2Error(.noResponse, detail: "HTTP \(response.status) without a reason"))
        }
        let timestamp = body?["timestamp"]?.integerValue
        return AttemptResult(
            verdict: APNsClassifier.classify(status: response.status, reason: reason, timestamp: timestamp, apnsID: apnsID),
            status: response.status,
            reason: reason
        )
    }

    private func log(_ report: DeliveryReport, apnsID: String) {
        var metadata: Logger.Metadata = [
            "apns.id": "\(apnsID)", "push.outcome": "\(report.outcome.shortDescription)",
            "push.attempts": "\(report.attempts)",
        ]
        if let reason = report.upstreamReason { metadata["apns.reason"] = "\(reason)" }
        if case .configurationError = report.outcome {
            logger.warning("APNs refused the operator's configuration", metadata: metadata)
        } else {
            logger.debug("APNs push finished", metadata: metadata)
        }
    }
}
