import Foundation
package import Logging
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

    package init(payload: PayloadSettings, endpoint: String = ExpoSenderConfiguration.endpoint, accessToken: String? = nil) {
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

/// Sends to the Expo push service: the messages of one call go together, at most 100 per upstream request, and
/// each ticket is mapped back to its message by position.
package struct ExpoSender: PushSender {
    package let provider = Provider.expo
    package let configuration: ExpoSenderConfiguration
    private let client: HTTP2Client
    private let retries: RetryLoop
    private let environment: SenderEnvironment
    private let logger: Logger

    package init(
        configuration: ExpoSenderConfiguration,
        client: HTTP2Client,
        retries: RetryLoop = RetryLoop(),
        environment: SenderEnvironment = .live,
        logger: Logger = Logger(label: "pushrelay.expo")
    ) {
        self.configuration = configuration
        self.client = client
        self.retries = retries
        self.environment = environment
        self.logger = logger
    }

    package func send(_ pushes: [ResolvedPush]) async -> [DeliveryReport] {
        let started = ContinuousClock.now
        var reports = [DeliveryReport?](repeating: nil, count: pushes.count)
        var messages: [Int: ExpoMessage] = [:]
        for (index, push) in pushes.enumerated() {
            do {
                messages[index] = try ExpoMessage(push: push, settings: configuration.payload)
                retries.recordFirstAttempt()
            } catch {
                reports[index] = DeliveryReport(outcome: .rejected(.messageTooBig, reason: error.description), attempts: 0)
            }
        }

        var pending = messages.keys.sorted()
        var attempt = 1
        while !pending.isEmpty {
            let results = await sendInChunks(pending.map { ($0, messages[$0]?.json ?? [:]) })
            var again: [Int] = []
            var fallback: [Int: (DeliveryOutcome, AttemptResult)] = [:]
            var wait: Duration?
            for (index, result) in zip(pending, results) {
                func finish(_ outcome: DeliveryOutcome) {
                    let pendingReceipt = if case .delivered = outcome { true } else { false }
                    reports[index] = DeliveryReport(
                        outcome: outcome,
                        attempts: attempt,
                        upstreamStatus: result.status,
                        upstreamReason: result.reason,
                        latency: started.duration(to: .now),
                        receiptPending: pendingReceipt
                    )
                }
                switch result.verdict {
                case .final(let outcome):
                    finish(outcome)
                case .refreshCredentialAndRetry(let otherwise):
                    finish(otherwise)
                case .retry(let notBefore, _, let otherwise):
                    if retries.policy.allowsRetry(after: attempt) && retries.mayRetry() {
                        again.append(index)
                        fallback[index] = (otherwise, result)
                        if let notBefore { wait = max(wait ?? .zero, notBefore) }
                    } else {
                        finish(otherwise)
                    }
                }
            }
            guard !again.isEmpty else { break }
            let delay = retries.policy.delay(after: attempt, notBefore: wait, unit: environment.random())
            do {
                try await environment.sleep(delay)
            } catch {
                for index in again {
                    guard let (outcome, result) = fallback[index] else { continue }
                    reports[index] = DeliveryReport(
                        outcome: outcome,
                        attempts: attempt,
                        upstreamStatus: result.status,
                        upstreamReason: result.reason,
                        latency: started.duration(to: .now)
                    )
                }
                break
            }
            pending = again
            attempt += 1
        }
        return reports.map { $0 ?? DeliveryReport(outcome: .unavailable(reason: "not sent", retryAfter: nil), attempts: 0) }
    }

    /// Sends the messages in requests of at most 100, concurrently, and returns one result per message in order.
    private func sendInChunks(_ messages: [(Int, [String: JSONValue])]) async -> [AttemptResult] {
        let chunks = stride(from: 0, to: messages.count, by: ExpoSenderConfiguration.maxMessagesPerRequest).map {
            Array(messages[$0..<min($0 + ExpoSenderConfiguration.maxMessagesPerRequest, messages.count)])
        }
        let answers = await concurrentMap(chunks) { chunk in await self.sendChunk(chunk.map { $0.1 }) }
        return answers.flatMap { $0 }
    }

    private func sendChunk(_ messages: [[String: JSONValue]]) async -> [AttemptResult] {
        let body = JSONValue.array(messages.map(JSONValue.object)).encodedBytes()
        let request = HTTP2Request(
            url: configuration.endpoint + "/--/api/v2/push/send",
            headers: configuration.headers,
            body: body
        )
        let response: HTTP2Response
        do {
            response = try await client.send(request)
        } catch {
            return Array(repeating: transportFailure(error), count: messages.count)
        }
        return Self.classify(response, count: messages.count)
    }

    /// One result per message: each ticket when the request succeeded, the request's error for all otherwise.
    static func classify(_ response: HTTP2Response, count: Int) -> [AttemptResult] {
        let body = JSONValue.decode(response.body)?.objectValue
        if response.status == 200 {
            guard case .array(let tickets)? = body?["data"], tickets.count == count else {
                let failure = transportFailure(HTTP2Error(.noResponse, detail: "tickets do not match the messages"))
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
        let first = body?["errors"].flatMap { if case .array(let errors) = $0 { errors.first?.objectValue } else { nil } }
        let code = first?["code"]?.stringValue
        let transient = first?["isTransient"] == .bool(true)
        let verdict = ExpoClassifier.classifyRequest(
            status: response.status,
            code: code,
            isTransient: transient,
            retryAfter: retryAfter(response.header("retry-after"))
        )
        return Array(repeating: AttemptResult(verdict: verdict, status: response.status, reason: code), count: count)
    }
}
