package import Logging
package import RelayCore
import RelayHTTP2

/// Sends notifications to one provider: the one send-and-classify path of every sender, with the provider's own
/// parts plugged in (``ProviderUpstream``).
///
/// ### Overview
/// A send builds each notification's message once (one too big is refused without an attempt) and hands the messages
/// to the provider's ``RetryLoop``. Each attempt takes the credential's token, renewed when the last answer refused
/// it; sends the pending messages in requests of at most ``ProviderUpstream/maxMessagesPerRequest``, concurrently
/// when there are several; and classifies each answer, or the failure that stood for it, into one result per message.
///
/// APNs and FCM take one notification per request: each push gets a loop of its own, so its outcome is known as soon
/// as it arrives. The Expo pushes of one call share a loop; a retry resends only the messages whose verdicts asked
/// for one, and a whole-request error counts for every message of its request.
package struct ProviderSender<Upstream: ProviderUpstream>: PushSender {
    package let upstream: Upstream
    private let retries: RetryLoop
    private let environment: SenderEnvironment
    private let logger: Logger

    package init(
        upstream: Upstream,
        retries: RetryLoop = RetryLoop(),
        environment: SenderEnvironment = .live,
        logger: Logger = Logger(label: "pushrelay.\(Upstream.provider.rawValue)")
    ) {
        self.upstream = upstream
        self.retries = retries
        self.environment = environment
        self.logger = logger
    }

    package var provider: Provider { Upstream.provider }

    package func send(_ pushes: [ResolvedPush]) async -> [DeliveryReport] {
        guard Upstream.maxMessagesPerRequest > 1 else {
            return await concurrentMap(pushes) { push in await self.send(push) }
        }
        return await deliver(pushes)
    }

    /// Sends one push, retrying as its answers allow.
    package func send(_ push: ResolvedPush) async -> DeliveryReport {
        // `deliver` reports on every push it is given.
        await deliver([push])[0]
    }

    /// Sends `pushes` together through one retry loop; one report per push, in order.
    private func deliver(_ pushes: [ResolvedPush]) async -> [DeliveryReport] {
        let now = environment.now()
        var reports: [DeliveryReport] = []
        reports.reserveCapacity(pushes.count)
        var messages: [Upstream.Message] = []
        /// Where each message's report goes among `reports`.
        var positions: [Int] = []
        for push in pushes {
            do {
                messages.append(try upstream.message(for: push, now: now))
                positions.append(reports.count)
                reports.append(DeliveryReport(outcome: .unavailable(reason: "not sent", retryAfter: nil), attempts: 0))
            } catch {
                reports.append(DeliveryReport(outcome: .rejected(.messageTooBig, reason: error.description), attempts: 0))
            }
        }
        guard !messages.isEmpty else { return reports }

        var lastToken: String?
        let sent = await retries.run(
            count: messages.count,
            renewableCredential: upstream.credential != nil,
            environment: environment
        ) { pending, instructions in
            let token: String?
            do {
                token = try await self.token(replacing: instructions.renewCredential ? lastToken : nil)
            } catch {
                return Array(repeating: upstream.credentialFailure(error), count: pending.count)
            }
            if let token { lastToken = token }
            return await post(pending.map { messages[$0] }, token: token, freshConnection: instructions.freshConnection)
        }
        for (index, outcome) in sent.enumerated() {
            var report = outcome
            if Upstream.deliveryAwaitsReceipt, case .delivered = report.outcome { report.receiptPending = true }
            upstream.log(report, of: messages[index], to: logger)
            reports[positions[index]] = report
        }
        return reports
    }

    /// The credential's token, or a new one in place of `refused`; `nil` without a credential.
    private func token(replacing refused: String?) async throws -> String? {
        guard let credential = upstream.credential else { return nil }
        if let refused { return try await credential.tokenRefused(refused) }
        return try await credential.token()
    }

    /// Sends `messages` in requests of at most ``ProviderUpstream/maxMessagesPerRequest``, concurrently when there
    /// are several, and returns one result per message, in order.
    private func post(_ messages: [Upstream.Message], token: String?, freshConnection: Bool) async -> [AttemptResult] {
        let size = Upstream.maxMessagesPerRequest
        guard messages.count > size else {
            return await post(messages[...], token: token, freshConnection: freshConnection)
        }
        let chunks = stride(from: 0, to: messages.count, by: size).map {
            messages[$0..<min($0 + size, messages.count)]
        }
        let answers = await concurrentMap(chunks) { chunk in
            await self.post(chunk, token: token, freshConnection: freshConnection)
        }
        return answers.flatMap { $0 }
    }

    /// One upstream request for `messages`, and one result per message.
    private func post(_ messages: ArraySlice<Upstream.Message>, token: String?, freshConnection: Bool) async -> [AttemptResult] {
        let (endpoint, built) = upstream.request(for: messages, token: token)
        var request = built
        request.freshConnection = freshConnection
        do {
            return upstream.classify(try await endpoint.send(request), for: messages)
        } catch {
            return Array(repeating: AttemptResult(failure: error), count: messages.count)
        }
    }
}

/// Runs `operation` for every element concurrently and returns the results in the elements' order.
private func concurrentMap<Element: Sendable, Result: Sendable>(
    _ elements: [Element],
    _ operation: @escaping @Sendable (Element) async -> Result
) async -> [Result] {
    await withTaskGroup(of: (Int, Result).self) { group in
        for (index, element) in elements.enumerated() {
            group.addTask { (index, await operation(element)) }
        }
        var results = [Result?](repeating: nil, count: elements.count)
        for await (index, result) in group { results[index] = result }
        return results.compactMap { $0 }
    }
}
