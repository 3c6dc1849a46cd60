package import Foundation
package import Logging
package import RelayCore
package import RelayHTTP2

/// Fetches Expo receipts for accepted tickets after a delay and reports their final outcome.
///
/// Expo: a ticket `ok` means Expo took the message; its receipt (ready some minutes later, kept 24 hours) says whether
/// APNs or FCM accepted it, or that the token is dead.
package struct ExpoReceiptPoller: Sendable {
    package var configuration: ExpoSenderConfiguration
    /// How long after sending to ask (Expo suggests about 15 minutes).
    package var delay: Duration
    /// How often to look for tickets to check: by default as often as the delay, from once a second to once a minute,
    /// so that a short delay (a test, a demo) is also kept to within about a second.
    package var interval: Duration
    private let client: HTTP2Client
    private let store: any ExpoReceiptStore
    private let environment: SenderEnvironment
    private let logger: Logger

    package init(
        configuration: ExpoSenderConfiguration,
        store: any ExpoReceiptStore,
        client: HTTP2Client,
        delay: Duration = .seconds(15 * 60),
        interval: Duration? = nil,
        environment: SenderEnvironment = .live,
        logger: Logger = Logger(label: "pushrelay.expo.receipts")
    ) {
        self.configuration = configuration
        self.store = store
        self.client = client
        self.delay = delay
        self.interval = interval ?? Self.interval(forDelay: delay)
        self.environment = environment
        self.logger = logger
    }

    /// The default ``interval`` for a delay: the delay itself, kept within 1 s...60 s.
    package static func interval(forDelay delay: Duration) -> Duration {
        min(max(delay, .seconds(1)), .seconds(60))
    }

    /// Polls until the task is cancelled.
    package func run() async {
        while !Task.isCancelled {
            do {
                _ = try await pollOnce()
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                logger.warning("Expo receipt poll failed", metadata: ["error": "\(error)"])
            }
            do { try await environment.sleep(interval) } catch { return }
        }
    }

    /// Fetches the receipts of every ticket older than `delay`, at most 1,000 per request.
    ///
    /// - Returns: how many receipts arrived and were recorded.
    /// Expo keeps receipts for 24 hours; a ticket still pending after that can never be resolved.
    package static let receiptLifetime: TimeInterval = 24 * 3600

    @discardableResult
    package func pollOnce() async throws -> Int {
        let now = environment.now()
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
        let cutoff = now.addingTimeInterval(-seconds)
        var recorded = try await closeExpiredTickets(now: now)
        while true {
            let ids = try await store.pendingExpoTickets(
                sentBefore: cutoff,
                limit: ExpoSenderConfiguration.maxReceiptsPerRequest
            )
            guard !ids.isEmpty else { return recorded }
            let receipts = try await fetch(ids)
            for (id, outcome) in receipts {
                try await store.recordExpoReceipt(ticketID: id, outcome: outcome)
                recorded += 1
            }
            // Receipts not ready yet stay pending; stop rather than ask for the same ids again at once.
            if receipts.count < ids.count || ids.count < ExpoSenderConfiguration.maxReceiptsPerRequest {
                return recorded
            }
        }
    }

    /// Closes tickets older than Expo's receipt lifetime: their outcome can no longer be learned, and leaving them
    /// pending would keep them at the head of every poll.
    private func closeExpiredTickets(now: Date) async throws -> Int {
        let expired = DeliveryOutcome.unavailable(
            reason: "Expo's receipt expired before it could be fetched; the outcome is unknown",
            retryAfter: nil
        )
        var closed = 0
        while true {
            let ids = try await store.pendingExpoTickets(
                sentBefore: now.addingTimeInterval(-Self.receiptLifetime),
                limit: ExpoSenderConfiguration.maxReceiptsPerRequest
            )
            guard !ids.isEmpty else { return closed }
            for id in ids { try await store.recordExpoReceipt(ticketID: id, outcome: expired) }
            closed += ids.count
        }
    }

    /// Asks Expo for the receipts of up to 1,000 tickets; unknown or unready ids are absent from the answer.
    package func fetch(_ ids: [String]) async throws -> [String: DeliveryOutcome] {
        let body = JSONValue.object(["ids": .array(ids.map(JSONValue.string))]).encodedBytes()
        let response = try await client.send(
            HTTP2Request(
                url: configuration.endpoint + "/--/api/v2/push/getReceipts",
                headers: configuration.headers,
                body: body
            )
        )
        guard response.status == 200, let data = JSONValue.decode(response.body)?.objectValue?["data"]?.objectValue
        else {
            throw HTTP2Error(.other, detail: "getReceipts answered HTTP \(response.status)")
        }
        var outcomes: [String: DeliveryOutcome] = [:]
        for (id, receipt) in data {
            let fields = receipt.objectValue ?? [:]
            let verdict = ExpoClassifier.classifyTicket(
                status: fields["status"]?.stringValue ?? "error",
                id: id,
                error: fields["details"]?.objectValue?["error"]?.stringValue,
                message: fields["message"]?.stringValue
            )
            switch verdict {
            case .final(let outcome): outcomes[id] = outcome
            case .retry(_, _, let otherwise), .refreshCredentialAndRetry(let otherwise): outcomes[id] = otherwise
            }
        }
        return outcomes
    }
}
