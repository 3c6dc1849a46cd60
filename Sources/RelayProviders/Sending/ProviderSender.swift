import Foundation
package import Logging
package import RelayCore
import RelayHTTP2
import Synchronization

/// Sends notifications to one provider: the one send-and-classify path of every sender, with the provider's own
/// parts plugged in (``ProviderUpstream``).
///
/// ### Overview
/// A send builds each notification's message once (one too big is refused without an attempt), gives each its
/// deadline (its `ttl` or `expiration`, within the retry window from now, or from its admission for a push resumed
/// from the journal: ``ResolvedPush/sendDeadline``) and hands the messages to the provider's
/// ``RetryLoop`` with the gate (circuit breaker and retry budget) of the upstream they go to. Each attempt takes the
/// credential's token, renewed when the last answer refused it; sends the pending messages in requests of at most
/// ``ProviderUpstream/maxMessagesPerRequest``, concurrently when there are several; and classifies each answer, or the
/// failure that stood for it, into one result per message.
///
/// APNs and FCM take one notification per request, and each push is judged and retried on its own, as if sent alone.
/// The pushes of one call make their first attempts together (``send(each:report:)``): while the upstream's gate is
/// quiet they are admitted at once, their requests go to the pool in one hand-over, and the task is resumed once, when
/// the last answer is in; each push that needs more than that one attempt goes on in a loop of its own
/// (``RetryLoop/resume(after:started:terms:renewableCredential:gate:environment:attempt:)``). The Expo pushes of one
/// call share a loop; a retry resends only the messages whose verdicts asked for one, and a whole-request error counts
/// for every message of its request.
package struct ProviderSender<Upstream: ProviderUpstream>: PushSender {
    package let upstream: Upstream
    /// The retry loop, with the policy and the upstreams' gates.
    package let retries: RetryLoop
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

    // Callers reach a sender through `any PushSender` (or the delivery job's `SinglePushSender`), whose witnesses
    // are generic: each entry point checks its `Upstream` against these three and runs a body specialised for it,
    // so a push never goes through generic metadata and value witnesses (`relay-bench relay`: a few per cent more
    // relay CPU per notification without them).
    //
    // The check runs inside the generic entry point, whose async frame its caller has already allocated on the
    // task: so each entry point's body is one call, and the work is in functions kept out of line. With the work
    // inlined, the generic frame of `send(_ push:)` was 3,136 bytes, held for every push in flight beside the
    // specialised frames that do the work (`relay-bench relay`, batched phase: about 6 MB of peak RSS at 2,000
    // notifications in flight).
    @_specialize(where Upstream == APNsUpstream)
    @_specialize(where Upstream == FCMUpstream)
    @_specialize(where Upstream == ExpoUpstream)
    package func send(_ pushes: [ResolvedPush]) async -> [DeliveryReport] {
        await sendAll(pushes)
    }

    /// Sends one push, retrying as its answers allow.
    @_specialize(exported:true,where Upstream == APNsUpstream)
    @_specialize(exported:true,where Upstream == FCMUpstream)
    @_specialize(where Upstream == ExpoUpstream)
    package func send(_ push: ResolvedPush) async -> DeliveryReport {
        await sendOne(push)
    }

    /// Sends every push and reports each one's outcome, with the push's position, when its send ends: those decided by
    /// the first attempt once the last of those answers is in, the others as each one's retry loop ends. Every push is
    /// reported exactly once, from the calling task or from a child task of it.
    ///
    /// For APNs and FCM (one notification a request) the first attempts go together (see the type's overview): one
    /// hand-over to the pool and one resumption for all of them, instead of a task, a retry loop and a continuation
    /// for each (`relay-bench relay`, batched phase). For Expo, ``send(_:)-([ResolvedPush])``.
    @_specialize(exported:true,where Upstream == APNsUpstream)
    @_specialize(exported:true,where Upstream == FCMUpstream)
    @_specialize(where Upstream == ExpoUpstream)
    package func send(each pushes: [ResolvedPush], report: @escaping @Sendable (Int, DeliveryReport) -> Void) async {
        await sendEach(pushes, report: report)
    }

    @inline(never)
    private func sendAll(_ pushes: [ResolvedPush]) async -> [DeliveryReport] {
        guard Upstream.maxMessagesPerRequest > 1 else {
            let collected = Collected(count: pushes.count)
            await sendEach(pushes) { position, report in collected.store(report, at: position) }
            return collected.reports
        }
        return await deliver(pushes)
    }

    @inline(never)
    private func sendEach(_ pushes: [ResolvedPush], report: @escaping @Sendable (Int, DeliveryReport) -> Void) async {
        guard Upstream.maxMessagesPerRequest == 1, pushes.count > 1 else {
            if pushes.count == 1 {
                report(0, await sendOne(pushes[0]))
            } else {
                for (position, outcome) in await deliver(pushes).enumerated() { report(position, outcome) }
            }
            return
        }
        let batch = prepare(pushes)
        for refused in batch.refused { report(refused.position, refused.report) }
        guard !batch.messages.isEmpty else { return }
        let first = FirstAttempts(batch: batch, pushes: pushes, report: report)
        // Every message of one APNs send goes to the same environment, almost always: one group.
        let endpoints = batch.messages.map { upstream.endpoint(for: $0) }
        let groups = Dictionary(grouping: batch.messages.indices, by: { ObjectIdentifier(endpoints[$0]) })
        guard groups.count > 1 else {
            await attemptTogether(Array(batch.messages.indices), endpoint: endpoints[0], first)
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for indices in groups.values {
                group.addTask { await self.attemptTogether(indices, endpoint: endpoints[indices[0]], first) }
            }
        }
    }

    /// What the first attempts of one ``send(each:report:)`` share.
    private struct FirstAttempts: Sendable {
        let batch: Batch
        let pushes: [ResolvedPush]
        let report: @Sendable (Int, DeliveryReport) -> Void
        /// Each message's push position (messages skip the pushes refused before sending).
        let positions: [Int]

        init(batch: Batch, pushes: [ResolvedPush], report: @escaping @Sendable (Int, DeliveryReport) -> Void) {
            self.batch = batch
            self.pushes = pushes
            self.report = report
            let refused = Set(batch.refused.map(\.position))
            positions = refused.isEmpty ? Array(pushes.indices) : pushes.indices.filter { !refused.contains($0) }
        }
    }

    /// The first attempts of the messages at `indices`, all to `endpoint`, together; then a loop of its own for each
    /// message whose answer asks for more.
    private func attemptTogether(_ indices: [Int], endpoint: UpstreamEndpoint, _ first: FirstAttempts) async {
        let gate = retries.gate(for: ObjectIdentifier(endpoint), provider: Upstream.provider)
        guard gate.isQuiet else {
            // The circuit is open, half-open or counting failures: each push asks the gate for itself (one may go as
            // the probe while the others are held), as a push sent alone does.
            await withTaskGroup(of: Void.self) { group in
                for index in indices {
                    let position = first.positions[index]
                    group.addTask { first.report(position, await self.sendOne(first.pushes[position])) }
                }
            }
            return
        }
        let started = environment.instant()
        gate.recordFirstAttempt(count: indices.count, now: started)
        var token: String?
        let results: [AttemptResult]
        do {
            token = try await self.token(replacing: nil)
            results = await exchangeEach(indices.map { first.batch.messages[$0] }, endpoint: endpoint, token: token)
        } catch {
            results = Array(repeating: upstream.credentialFailure(error), count: indices.count)
        }
        let now = environment.instant()
        var unfinished: [(index: Int, result: AttemptResult)] = []
        for (index, result) in zip(indices, results) {
            gate.requestEnded(result.signal, probe: false, now: now)
            guard case .final(let outcome) = result.verdict else {
                unfinished.append((index, result))
                continue
            }
            var report = DeliveryReport(
                outcome: outcome, attempts: 1, upstreamStatus: result.status, upstreamReason: result.reason,
                latency: now - started)
            complete(&report, of: first.batch.messages[index])
            first.report(first.positions[index], report)
        }
        guard !unfinished.isEmpty else { return }
        let lastToken = token
        await withTaskGroup(of: Void.self) { group in
            for (index, result) in unfinished {
                group.addTask {
                    var report = await self.goOn(
                        after: result, started: started, message: first.batch.messages[index],
                        terms: first.batch.terms[index], gate: gate, lastToken: lastToken)
                    self.complete(&report, of: first.batch.messages[index])
                    first.report(first.positions[index], report)
                }
            }
        }
    }

    /// One message's attempts after its first, in a retry loop of its own.
    private func goOn(
        after result: AttemptResult,
        started: ContinuousClock.Instant,
        message: Upstream.Message,
        terms: RetryLoop.Terms,
        gate: UpstreamGate,
        lastToken: String?
    ) async -> DeliveryReport {
        var lastToken = lastToken
        let messages = [message]
        return await retries.resume(
            after: result,
            started: started,
            terms: terms,
            renewableCredential: upstream.credential != nil,
            gate: gate,
            environment: environment
        ) { pending, instructions in
            await attempt(messages, pending, instructions, lastToken: &lastToken)
        }
    }

    /// One request per message, handed to the endpoint's pool together; one result per message, in order.
    private func exchangeEach(
        _ messages: [Upstream.Message],
        endpoint: UpstreamEndpoint,
        token: String?
    ) async -> [AttemptResult] {
        let requests = messages.indices.map { request(for: messages[$0...$0], token: token, freshConnection: false).1 }
        let responses = await endpoint.send(all: consume requests)
        return zip(messages.indices, responses).map { index, response in
            switch response {
            case .success(let response): classify(response, for: messages[index...index])[0]
            case .failure(let error): AttemptResult(failure: error)
            }
        }
    }

    @inline(never)
    private func sendOne(_ push: ResolvedPush) async -> DeliveryReport {
        // `deliver` reports on every push it is given.
        await deliver(CollectionOfOne(push))[0]
    }

    /// Sends `pushes` together through one retry loop; one report per push, in order.
    ///
    /// The synchronous steps (building the messages and requests, classifying, reporting) are functions of their own,
    /// kept out of line: an async function's locals live in a frame on its task's allocator, and with these steps
    /// inlined that frame reached kilobytes, more than a task's first slab, so every push allocated and freed memory
    /// for it (`perf` on `relay-bench relay`: task-allocator slabs and page faults).
    private func deliver(_ pushes: some Collection<ResolvedPush>) async -> [DeliveryReport] {
        let batch = prepare(pushes)
        guard !batch.messages.isEmpty else { return batch.refused.map(\.report) }
        let messages = batch.messages
        var lastToken: String?
        // Every message of one send goes to one upstream (one Expo endpoint; one APNs message per send).
        let gate = retries.gate(
            for: ObjectIdentifier(upstream.endpoint(for: messages[0])), provider: Upstream.provider)
        var reports = await retries.run(
            terms: batch.terms,
            renewableCredential: upstream.credential != nil,
            gate: gate,
            environment: environment
        ) { pending, instructions in
            await attempt(messages, pending, instructions, lastToken: &lastToken)
        }
        finish(&reports, batch)
        return reports
    }

    /// The messages of the pushes to send, and the pushes refused before sending.
    struct Batch: Sendable {
        var messages: [Upstream.Message] = []
        /// Each message's deadline and criticality, in the order of ``messages``.
        var terms: [RetryLoop.Terms] = []
        /// Each push refused before sending (its message too big), by its position among the pushes; usually none.
        var refused: [(position: Int, report: DeliveryReport)] = []
    }

    /// Builds each push's message once, and its terms; one too big gets its report at once, without an attempt.
    @inline(never)
    private func prepare(_ pushes: some Collection<ResolvedPush>) -> Batch {
        let now = environment.now()
        let start = environment.instant()
        var batch = Batch()
        batch.messages.reserveCapacity(pushes.count)
        batch.terms.reserveCapacity(pushes.count)
        var previous: (push: ResolvedPush, message: Upstream.Message)?
        for (position, push) in pushes.enumerated() {
            do {
                let message = try upstream.message(for: push, now: now, following: previous)
                batch.messages.append(message)
                previous = (push, message)
                var deadline = retries.policy.deadline(
                    start: start, ttl: push.message.ttl, expiration: push.message.expiration, date: now)
                if let sendDeadline = push.sendDeadline {
                    // A resumed push: its deadline counts from its admission, not from this send.
                    deadline = min(deadline, start + .seconds(max(0, sendDeadline.timeIntervalSince(now))))
                }
                batch.terms.append(RetryLoop.Terms(deadline: deadline, critical: push.isCritical))
            } catch {
                let refused = error.outcome
                batch.refused.append((position, DeliveryReport(outcome: refused, attempts: 0)))
            }
        }
        return batch
    }

    /// Completes and logs each sent message's report, and puts the refused pushes' reports in their places.
    @inline(never)
    private func finish(_ reports: inout [DeliveryReport], _ batch: Batch) {
        for index in reports.indices { complete(&reports[index], of: batch.messages[index]) }
        // In increasing positions, so each lands where its push stood.
        for (position, report) in batch.refused { reports.insert(report, at: position) }
    }

    /// Completes and logs a sent message's final report.
    private func complete(_ report: inout DeliveryReport, of message: Upstream.Message) {
        if Upstream.deliveryAwaitsReceipt, case .delivered = report.outcome { report.receiptPending = true }
        upstream.log(report, of: message, to: logger)
    }

    /// One attempt for the `pending` messages: the credential's token (renewed when the last answer refused it), then
    /// the requests; one result per pending message, in order.
    private func attempt(
        _ messages: [Upstream.Message],
        _ pending: PendingIndices,
        _ instructions: AttemptInstructions,
        lastToken: inout String?
    ) async -> [AttemptResult] {
        let token: String?
        do {
            token = try await self.token(replacing: instructions.renewCredential ? lastToken : nil)
        } catch {
            return Array(repeating: upstream.credentialFailure(error), count: pending.count)
        }
        if let token { lastToken = token }
        // Pending indices only grow, so as many as there are messages means all of them.
        let selected = pending.count == messages.count ? messages[...] : ArraySlice(pending.map { messages[$0] })
        return await post(selected, token: token, freshConnection: instructions.freshConnection)
    }

    /// The credential's token, or a new one in place of `refused`; `nil` without a credential.
    private func token(replacing refused: String?) async throws -> String? {
        guard let credential = upstream.credential else { return nil }
        if let refused { return try await credential.tokenRefused(refused) }
        return try await credential.token()
    }

    /// Sends `messages` in requests of at most ``ProviderUpstream/maxMessagesPerRequest``, concurrently when there
    /// are several, and returns one result per message, in order.
    private func post(
        _ messages: ArraySlice<Upstream.Message>,
        token: String?,
        freshConnection: Bool
    ) async -> [AttemptResult] {
        guard messages.count > Upstream.maxMessagesPerRequest else {
            return await exchange(messages, token: token, freshConnection: freshConnection)
        }
        return await postInChunks(messages, token: token, freshConnection: freshConnection)
    }

    /// ``post(_:token:freshConnection:)`` for more messages than one request carries: out of line, so that the frame
    /// of every push's `post` does not hold a task group's.
    @inline(never)
    private func postInChunks(
        _ messages: ArraySlice<Upstream.Message>,
        token: String?,
        freshConnection: Bool
    ) async -> [AttemptResult] {
        let size = Upstream.maxMessagesPerRequest
        let chunks = stride(from: messages.startIndex, to: messages.endIndex, by: size).map {
            messages[$0..<min($0 + size, messages.endIndex)]
        }
        let answers = await concurrentMap(chunks) { chunk in
            await self.exchange(chunk, token: token, freshConnection: freshConnection)
        }
        return answers.flatMap { $0 }
    }

    /// One upstream request for `messages`, and one result per message.
    private func exchange(
        _ messages: ArraySlice<Upstream.Message>,
        token: String?,
        freshConnection: Bool
    ) async -> [AttemptResult] {
        let (endpoint, request) = request(for: messages, token: token, freshConnection: freshConnection)
        let response: HTTP2Response
        do {
            response = try await endpoint.send(consume request)
        } catch {
            return Array(repeating: AttemptResult(failure: error), count: messages.count)
        }
        return classify(response, for: messages)
    }

    @inline(never)
    private func request(
        for messages: ArraySlice<Upstream.Message>,
        token: String?,
        freshConnection: Bool
    ) -> (UpstreamEndpoint, HTTP2Request) {
        var (endpoint, request) = upstream.request(for: messages, token: token)
        request.freshConnection = freshConnection
        return (endpoint, request)
    }

    @inline(never)
    private func classify(_ response: HTTP2Response, for messages: ArraySlice<Upstream.Message>) -> [AttemptResult] {
        upstream.classify(response, for: messages)
    }
}

/// Sends to APNs with token authentication over the HTTP/2 pool.
package typealias APNsSender = ProviderSender<APNsUpstream>

/// Sends to FCM HTTP v1 with the service account's OAuth access token.
package typealias FCMSender = ProviderSender<FCMUpstream>

/// Sends to the Expo push service: the messages of one call go together, at most 100 per upstream request, and
/// each ticket is mapped back to its message by position.
package typealias ExpoSender = ProviderSender<ExpoUpstream>

/// The reports of ``ProviderSender/send(_:)-([ResolvedPush])``, stored by position as they arrive.
private final class Collected: Sendable {
    private let stored: Mutex<[DeliveryReport?]>

    init(count: Int) {
        stored = Mutex(Array(repeating: nil, count: count))
    }

    func store(_ report: DeliveryReport, at position: Int) {
        stored.withLock { $0[position] = report }
    }

    /// Every report, once the send has returned (each push is reported exactly once before that).
    var reports: [DeliveryReport] {
        stored.withLock { $0.compactMap { $0 } }
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
