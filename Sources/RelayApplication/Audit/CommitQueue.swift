import Foundation
package import Logging
import Metrics
package import RelayCore
package import RelayStore
import ServiceLifecycle
import Synchronization

/// What the relay writes to its own audit chain, and how.
package struct AuditLogSettings: Sendable {
    /// Whether audit records are written at all (`[audit] enabled`).
    package var enabled: Bool
    /// This instance's chain id (`[audit] instance`): every instance writes its own chain.
    package var chain: String
    /// Signs checkpoints (`[audit] signing_key_file`); without it checkpoints are not written.
    package var signingKey: AuditSigningKey?
    /// How often the head of the chain is signed while records arrive.
    package var checkpointInterval: Duration

    package init(
        enabled: Bool = true,
        chain: String = "relay",
        signingKey: AuditSigningKey? = nil,
        checkpointInterval: Duration = .seconds(60)
    ) {
        self.enabled = enabled
        self.chain = chain
        self.signingKey = signingKey
        self.checkpointInterval = checkpointInterval
    }
}

/// Group commit: the store writes of many requests (receipts, receipt updates, usage counters and audit records) in
/// one transaction, and each caller resumes once its own writes are durable.
///
/// ### Overview
/// A request ``submit(_:audit:)``s its writes and waits. One writer loop (``run()``) takes everything submitted
/// since its last commit, chains the audit entries onto this instance's hash chain, signs a checkpoint when one is
/// due, commits it all at once and resumes every submitter. While a commit runs, new submissions gather for the
/// next one; so under load a transaction carries many requests, and when idle a request waits for one commit.
///
/// ### Implementation
/// - The chain (`AuditChain`) is advanced on a copy and kept only when the commit succeeds, so a failed commit
///   leaves no gap in the chain; its submitters get the error.
/// - Memory stays bounded: when more than `maxPendingWrites` writes wait, submitters wait for room before queueing.
/// - Time comes from the relay's clock: the checkpoint interval is measured on its monotonic time, so a test moves a
///   manual clock past the interval instead of waiting; a checkpoint carries its wall-clock date.
/// - The head is signed within the checkpoint interval of its last record even when nothing follows: while a record
///   is unsigned, the writer waits for submissions only until the interval ends, then signs the head on its own (an
///   idle relay would otherwise leave a burst's last records unsigned until the next traffic).
/// - At start it signs the head it resumes from (``signAtStart(_:)``): a relay that died without its closing
///   checkpoint leaves no unsigned tail once the next one starts.
/// - On graceful shutdown it stops taking writes only after the services listed after it (the delivery queue)
///   have drained: it is listed before them, so it stops after them, commits what is left, signs a last checkpoint
///   and returns.
package final class CommitQueue: Service, Sendable, CustomStringConvertible {
    package var description: String { "CommitQueue" }

    private struct Submission {
        var batch: StoreBatch
        var audit: [AuditEntry]
        var continuation: CheckedContinuation<Void, any Error>
        /// Whether it closes one of the receipts `ids`.
        func closesAny(of ids: Set<String>) -> Bool { batch.receiptCloses.contains { ids.contains($0.id) } }
        var size: Int {
            batch.receipts.count + batch.receiptUpdates.count + batch.receiptCloses.count + batch.journal.count
                + batch.journalDeletes.count + audit.count + 1
        }
    }

    private struct State {
        var submissions: [Submission] = []
        var pendingWrites = 0
        var writerWaiting: CheckedContinuation<Void, Never>?
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        var closed = false
    }

    package let store: any PushStore
    package let settings: AuditLogSettings
    private let state = Mutex(State())
    private let maxPendingWrites: Int
    private let logger: Logger
    private let clock: RelayClock
    private let lastCommitFailed = Atomic(false)
    private let commits = Counter(label: "relay_store_commits_total")
    private let failedCommits = Counter(label: "relay_store_commit_failures_total")
    private let batchSize = Recorder(label: "relay_store_commit_writes")
    private let commitDuration = Timer(label: "relay_store_commit_duration_seconds")
    /// Told of each checkpoint once it is stored (tests wait on it instead of polling the store).
    private let checkpointObserver: (@Sendable (AuditCheckpoint) -> Void)?

    package init(
        store: any PushStore,
        settings: AuditLogSettings = .init(),
        maxPendingWrites: Int = 50_000,
        logger: Logger = Logger(label: "pushrelay.commit"),
        clock: RelayClock = .system,
        checkpointObserver: (@Sendable (AuditCheckpoint) -> Void)? = nil
    ) {
        self.checkpointObserver = checkpointObserver
        self.store = store
        self.settings = settings
        self.maxPendingWrites = maxPendingWrites
        self.logger = logger
        self.clock = clock
    }

    /// Whether the last commit failed, until one succeeds again: the store is in trouble, and the relay writes
    /// receipts ahead of sending (see ``Relay``).
    package var isFailing: Bool { lastCommitFailed.load(ordering: .relaxed) }

    /// How many submissions wait for the next commit (for tests that must know a round is gathered).
    package var waitingSubmissions: Int { state.withLock { $0.submissions.count } }

    /// Writes `batch` and `audit` with the next group commit; returns once they are committed.
    ///
    /// - Throws: The store's error when the commit fails, ``CommitQueueClosed`` after shutdown.
    package func submit(_ batch: StoreBatch, audit: [AuditEntry] = []) async throws {
        let audit = settings.enabled ? audit : []
        if batch.isEmpty && audit.isEmpty { return }
        await waitForRoom()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let submission = Submission(batch: batch, audit: audit, continuation: continuation)
            let outcome = state.withLock { state -> (accepted: Bool, wake: CheckedContinuation<Void, Never>?) in
                guard !state.closed else { return (false, nil) }
                state.submissions.append(submission)
                state.pendingWrites += submission.size
                defer { state.writerWaiting = nil }
                return (true, state.writerWaiting)
            }
            guard outcome.accepted else {
                continuation.resume(throwing: CommitQueueClosed())
                return
            }
            outcome.wake?.resume()
        }
    }

    private func waitForRoom() async {
        // The usual case, without a continuation: there is room.
        if state.withLock({ $0.pendingWrites < maxPendingWrites || $0.closed }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let hasRoom = state.withLock { state in
                if state.pendingWrites < maxPendingWrites || state.closed { return true }
                state.roomWaiters.append(continuation)
                return false
            }
            if hasRoom { continuation.resume() }
        }
    }

    package func run() async throws {
        let chain = try await resumeChain()
        let signed = await signAtStart(chain?.head)
        // Cancellation closes the queue as graceful shutdown does (what is queued is still committed), so a service
        // group that is cancelled never waits on it for ever.
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await self.writeUntilClosed(chain: chain, headSigned: signed)
            } onGracefulShutdown: {
                self.close()
            }
        } onCancel: {
            self.close()
        }
    }

    /// The writer loop: one commit per round of submissions, until closed and drained. An unsigned head
    /// (`headSigned` false) is signed when the checkpoint interval has passed.
    private func writeUntilClosed(chain start: AuditChain?, headSigned: Bool) async {
        var chain = start
        var lastCheckpoint = clock.now
        var checkpointedSeq = headSigned ? chain?.lastSeq ?? 0 : 0
        while true {
            // While the head is unsigned, wake when its signature is due even if nothing is submitted.
            let unsigned = settings.signingKey != nil && (chain?.head.seq ?? 0) > checkpointedSeq
            let signingDue = unsigned ? lastCheckpoint + settings.checkpointInterval : nil
            guard var submissions = await nextSubmissions(orUntil: signingDue) else { break }
            if submissions.isEmpty {
                // Idle, and the interval has passed: sign the head alone.
                if let head = chain?.head, head.seq > checkpointedSeq, let checkpoint = checkpoint(of: head) {
                    do {
                        try await store.commit(StoreBatch(checkpoints: [checkpoint]))
                        checkpointedSeq = head.seq
                        checkpointObserver?(checkpoint)
                    } catch {
                        logger.error("An audit checkpoint could not be stored", metadata: ["error": "\(error)"])
                    }
                }
                // A failed attempt is tried again an interval later, not in a loop.
                lastCheckpoint = clock.now
                continue
            }
            var written = 0
            while !submissions.isEmpty {
                var batch = StoreBatch()
                var next = chain
                for submission in submissions {
                    batch.append(submission.batch)
                    for entry in submission.audit {
                        if let record = next?.append(entry.normalisedForStorage()) { batch.audit.append(record) }
                    }
                }
                if let head = next?.head, head.seq > checkpointedSeq,
                    clock.now - lastCheckpoint >= settings.checkpointInterval,
                    let checkpoint = checkpoint(of: head)
                {
                    batch.checkpoints.append(checkpoint)
                }
                do {
                    let started = clock.now
                    try await store.commit(batch)
                    commitDuration.record(clock.now - started)
                    lastCommitFailed.store(false, ordering: .relaxed)
                    chain = next
                    if let signed = batch.checkpoints.last {
                        checkpointedSeq = signed.seq
                        lastCheckpoint = clock.now
                        checkpointObserver?(signed)
                    }
                    commits.increment()
                    batchSize.record(submissions.reduce(0) { $0 + $1.size })
                    for submission in submissions { submission.continuation.resume() }
                    written += submissions.reduce(0) { $0 + $1.size }
                    submissions = []
                } catch StoreError.receiptsAlreadyFinal(let ids) {
                    // Receipts another relay closed first: their submissions get the error (they record nothing),
                    // the others are committed again without them, with the chain advanced anew from its head.
                    let closed = Set(ids)
                    let refused = submissions.filter { $0.closesAny(of: closed) }
                    for submission in refused {
                        submission.continuation.resume(throwing: StoreError.receiptsAlreadyFinal(ids))
                    }
                    written += refused.reduce(0) { $0 + $1.size }
                    submissions.removeAll { $0.closesAny(of: closed) }
                    if refused.isEmpty {
                        // A store naming receipts no submission closes: fail them all rather than loop.
                        for submission in submissions {
                            submission.continuation.resume(throwing: StoreError.receiptsAlreadyFinal(ids))
                        }
                        written += submissions.reduce(0) { $0 + $1.size }
                        submissions = []
                    }
                } catch {
                    lastCommitFailed.store(true, ordering: .relaxed)
                    failedCommits.increment()
                    logger.error(
                        "Store commit failed",
                        metadata: ["error": "\(error)", "requests": "\(submissions.count)"]
                    )
                    for submission in submissions { submission.continuation.resume(throwing: error) }
                    written += submissions.reduce(0) { $0 + $1.size }
                    submissions = []
                }
            }
            finished(writing: written)
        }
        // Closed and drained: sign where the chain ends, so that an export made later verifies to the end.
        if let head = chain?.head, head.seq > checkpointedSeq, let checkpoint = checkpoint(of: head) {
            do {
                try await store.commit(StoreBatch(checkpoints: [checkpoint]))
            } catch {
                logger.error("The closing audit checkpoint could not be stored", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Reads where this instance's chain ends; `nil` when the audit log is off.
    private func resumeChain() async throws -> AuditChain? {
        guard settings.enabled else { return nil }
        return AuditChain(chain: settings.chain, head: try await store.auditHead(chain: settings.chain))
    }

    /// Signs the head the chain resumes from, before the first commit: a predecessor that stopped without its
    /// closing checkpoint (a crash, `kill -9`) left its last records unsigned. A head already signed with this key is
    /// not signed twice: the store keeps one checkpoint per chain, seq and key.
    ///
    /// - Returns: Whether the head is signed (or there is nothing to sign); `false` when the checkpoint could not be
    ///   stored, so that the writer signs the head once the checkpoint interval has passed.
    private func signAtStart(_ head: AuditAnchor?) async -> Bool {
        guard let head, head.seq > 0, let checkpoint = checkpoint(of: head) else { return true }
        do {
            try await store.commit(StoreBatch(checkpoints: [checkpoint]))
            checkpointObserver?(checkpoint)
            return true
        } catch {
            logger.error("The chain's head could not be signed at start", metadata: ["error": "\(error)"])
            return false
        }
    }

    private func checkpoint(of head: AuditAnchor) -> AuditCheckpoint? {
        settings.signingKey?.checkpoint(chain: head.chain, seq: head.seq, link: head.link, time: clock.date)
    }

    /// Everything submitted so far, waiting for the first; `nil` once closed and drained; empty when `deadline`
    /// (on the relay's clock) came first.
    private func nextSubmissions(orUntil deadline: RelayClock.Instant?) async -> [Submission]? {
        guard let deadline else { return await waitForSubmissions(until: nil) }
        return await withTaskGroup(of: Void.self) { group in
            group.addTask { [clock] in
                // Ends at the deadline, or when cancelled below once submissions came first; either way it wakes
                // the writer, which then looks again (a wake-up with nothing new is harmless).
                try? await clock.sleep(until: deadline)
                self.wakeWriter()
            }
            let taken = await waitForSubmissions(until: deadline)
            group.cancelAll()
            return taken
        }
    }

    private func waitForSubmissions(until deadline: RelayClock.Instant?) async -> [Submission]? {
        while true {
            let taken = state.withLock { state -> [Submission]?? in
                if !state.submissions.isEmpty {
                    defer { state.submissions.removeAll(keepingCapacity: true) }
                    return .some(state.submissions)
                }
                if state.closed { return .some(nil) }
                if let deadline, clock.now >= deadline { return .some([]) }
                return .none
            }
            if let taken { return taken }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    // The deadline is read under the lock that `wakeWriter` takes: a sleeper that woke before this
                    // point has moved the clock past it, one that wakes after finds the continuation.
                    if !state.submissions.isEmpty || state.closed { return true }
                    if let deadline, clock.now >= deadline { return true }
                    state.writerWaiting = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Resumes the writer if it waits.
    private func wakeWriter() {
        let writer = state.withLock { state in
            defer { state.writerWaiting = nil }
            return state.writerWaiting
        }
        writer?.resume()
    }

    /// Frees the room of `written` writes, and wakes the submitters waiting for room.
    private func finished(writing written: Int) {
        let waiters = state.withLock { state in
            state.pendingWrites -= written
            guard state.pendingWrites < maxPendingWrites else { return [CheckedContinuation<Void, Never>]() }
            defer { state.roomWaiters.removeAll() }
            return state.roomWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops taking writes; what is queued is still committed.
    package func close() {
        let (writer, waiters) = state.withLock { state in
            state.closed = true
            defer {
                state.writerWaiting = nil
                state.roomWaiters.removeAll()
            }
            return (state.writerWaiting, state.roomWaiters)
        }
        writer?.resume()
        for waiter in waiters { waiter.resume() }
    }
}

/// A write submitted after the commit queue closed (the relay is shutting down).
package struct CommitQueueClosed: Error, CustomStringConvertible {
    package var description: String { "the relay is shutting down; the store takes no more writes" }
}
