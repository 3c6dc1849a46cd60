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
        /// The submitter, until it is resumed; `nil` for writes held after a failed commit (nobody waits on them).
        var continuation: CheckedContinuation<Void, any Error>?
        /// What a failed commit does with it.
        var ifFailed: IfCommitFails
        /// Identifies it for ``withdraw(_:)``; 0 for one that cannot be withdrawn.
        var id: UInt64
        /// Whether it closes one of the receipts `ids`.
        func closesAny(of ids: Set<String>) -> Bool { batch.receiptCloses.contains { ids.contains($0.id) } }
        var size: Int {
            batch.receipts.count + batch.receiptUpdates.count + batch.receiptCloses.count + batch.journal.count
                + batch.journalDeletes.count + audit.count + 1
        }

        /// Resumes the submitter, if any, once.
        mutating func resume(throwing error: (any Error)? = nil) {
            if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
            continuation = nil
        }
    }

    private struct State {
        var submissions: [Submission] = []
        var pendingWrites = 0
        var writerWaiting: CheckedContinuation<Void, Never>?
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        var closed = false
        var nextID: UInt64 = 0
    }

    package let store: any PushStore
    package let settings: AuditLogSettings
    private let state = Mutex(State())
    private let maxPendingWrites: Int
    private let logger: Logger
    private let clock: RelayClock
    private let lastCommitFailed = Atomic(false)
    /// Writes of failed commits held for the next attempt (``IfCommitFails/hold``).
    private let unsaved = Atomic(0)
    private let unsavedLimit: Int
    private let unsavedGauge = Gauge(label: "relay_store_unsaved_writes")
    private let withdrawals = Counter(label: "relay_store_request_timeouts_total")
    /// The first wait before held writes are committed again, and the longest.
    private let retryBackoff: (first: Duration, longest: Duration)
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
        unsavedLimit: Int = 50_000,
        retryBackoff: (first: Duration, longest: Duration) = (.milliseconds(250), .seconds(5)),
        logger: Logger = Logger(label: "pushrelay.commit"),
        clock: RelayClock = .system,
        checkpointObserver: (@Sendable (AuditCheckpoint) -> Void)? = nil
    ) {
        self.checkpointObserver = checkpointObserver
        self.store = store
        self.settings = settings
        self.maxPendingWrites = maxPendingWrites
        self.unsavedLimit = unsavedLimit
        self.retryBackoff = retryBackoff
        self.logger = logger
        self.clock = clock
    }

    /// Whether the store is in trouble: the last commit failed, or writes of failed commits are still held. The relay
    /// then writes receipts ahead of sending (see ``Relay``), and `/readyz` answers 503.
    package var isFailing: Bool { lastCommitFailed.load(ordering: .relaxed) || unsavedWrites > 0 }

    /// Writes of failed commits held in memory until the store takes them (see ``IfCommitFails/hold``).
    package var unsavedWrites: Int { unsaved.load(ordering: .relaxed) }

    /// Whether the writes held in memory have reached `[store] unsaved_limit`: the relay then takes no new requests
    /// (503) until the store takes them.
    package var isOverUnsavedLimit: Bool { unsavedWrites >= unsavedLimit }

    /// How many submissions wait for the next commit (for tests that must know a round is gathered).
    package var waitingSubmissions: Int { state.withLock { $0.submissions.count } }

    /// What a failed commit does with a submission's writes.
    package enum IfCommitFails: Sendable {
        /// The submitter gets the store's error; the writes are dropped. For writes an answer depends on: the caller
        /// answers 503 rather than promise what is not stored.
        case fail
        /// The writes are held in memory and committed again, with back-off, until the store takes them; the
        /// submitter resumes at once, without an error. For writes that record what has happened (outcomes of pushes
        /// sent, audit records of answers given): losing them would make the store untrue.
        case hold
    }

    /// Writes `batch` and `audit` with the next group commit; returns once they are committed (or held, with
    /// ``IfCommitFails/hold``).
    ///
    /// - Parameters:
    ///   - ifFailed: What a failed commit does with the writes.
    ///   - withdrawal: When the submitter stops waiting, and the timer that tells it: writes that no commit has taken
    ///     by then are withdrawn (never written) and ``StoreTimeout`` is thrown; writes a commit has taken are waited
    ///     for, as their fate is being decided. `[store] request_timeout_ms` for requests that wait on the store.
    /// - Throws: The store's error when the commit fails (``IfCommitFails/fail``), ``StoreTimeout``,
    ///   ``CommitQueueClosed`` after shutdown.
    package func submit(
        _ batch: StoreBatch,
        audit: [AuditEntry] = [],
        ifFailed: IfCommitFails = .fail,
        withdrawal: (at: RelayClock.Instant, timer: DeadlineTimer)? = nil
    ) async throws {
        let audit = settings.enabled ? audit : []
        if batch.isEmpty && audit.isEmpty { return }
        await waitForRoom()
        // Only a submission that may be withdrawn needs an id: the others take no lock for one (0, never given).
        let id: UInt64 =
            withdrawal == nil
            ? 0
            : state.withLock { state in
                state.nextID += 1
                return state.nextID
            }
        let token = withdrawal.map { $0.timer.schedule(at: $0.at) { self.withdraw(id) } }
        defer { if let token, let withdrawal { withdrawal.timer.cancel(token) } }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let submission = Submission(
                batch: batch, audit: audit, continuation: continuation, ifFailed: ifFailed, id: id)
            let outcome = state.withLock { state -> (accepted: Bool, wake: CheckedContinuation<Void, Never>?) in
                guard !state.closed else { return (false, nil) }
                if let withdrawal, clock.now >= withdrawal.at { return (false, nil) }
                state.submissions.append(submission)
                state.pendingWrites += submission.size
                defer { state.writerWaiting = nil }
                return (true, state.writerWaiting)
            }
            guard outcome.accepted else {
                let closed = state.withLock { $0.closed }
                continuation.resume(throwing: closed ? CommitQueueClosed() as any Error : StoreTimeout())
                return
            }
            outcome.wake?.resume()
        }
    }

    /// The timer of a submission with a withdrawal: takes it out of the queue unless a commit has taken it.
    private func withdraw(_ id: UInt64) {
        let withdrawn = state.withLock { state -> Submission? in
            guard let position = state.submissions.firstIndex(where: { $0.id == id }) else { return nil }
            let submission = state.submissions.remove(at: position)
            state.pendingWrites -= submission.size
            return submission
        }
        guard var withdrawn else { return }
        withdrawals.increment()
        withdrawn.resume(throwing: StoreTimeout())
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
    /// (`headSigned` false) is signed when the checkpoint interval has passed; writes held after a failed commit go
    /// with the next round, or alone once their back-off has passed.
    private func writeUntilClosed(chain start: AuditChain?, headSigned: Bool) async {
        var round = Round(chain: start, signedSeq: headSigned ? start?.lastSeq ?? 0 : 0, lastCheckpoint: clock.now)
        while true {
            // While the head is unsigned, wake when its signature is due even if nothing is submitted; while writes
            // are held, when they are due again.
            let unsigned = settings.signingKey != nil && (round.chain?.head.seq ?? 0) > round.signedSeq
            let signingDue = unsigned ? round.lastCheckpoint + settings.checkpointInterval : nil
            let wake = [signingDue, round.held.isEmpty ? nil : round.retryAt].compactMap { $0 }.min()
            guard let submissions = await nextSubmissions(orUntil: wake) else { break }
            if submissions.isEmpty && round.held.isEmpty {
                // Idle, and the interval has passed: sign the head alone.
                await signHead(&round)
                continue
            }
            if submissions.isEmpty, let retryAt = round.retryAt, clock.now < retryAt {
                // Woken to sign while writes are held but not due: they carry the checkpoint when they go.
                await signHead(&round)
                continue
            }
            finished(writing: await commit(submissions, in: &round))
        }
        // Closed and drained: one last attempt for held writes, then sign where the chain ends, so that an export
        // made later verifies to the end.
        if !round.held.isEmpty {
            _ = await commit([], in: &round)
            if !round.held.isEmpty {
                logger.critical(
                    """
                    Writes held since a failed commit could not be stored before shutdown: their receipts stay as \
                    they were stored (journaled notifications are resumed at the next start), their usage counts \
                    and audit records are lost
                    """,
                    metadata: ["writes": "\(round.held.reduce(0) { $0 + $1.size })"]
                )
            }
        }
        await signHead(&round)
    }

    /// What the writer loop carries from one round to the next.
    private struct Round {
        /// This instance's chain as committed; `nil` when the audit log is off.
        var chain: AuditChain?
        /// The last seq signed.
        var signedSeq: Int64
        var lastCheckpoint: RelayClock.Instant
        /// Writes of failed commits, in the order submitted, for the next attempt.
        var held: [Submission] = []
        /// When held writes are committed again without new submissions, and the wait after that.
        var retryAt: RelayClock.Instant?
        var backoff: Duration = .zero
        /// A commit failed: the chain's head is read from the store again before the next, so that a conflict (a
        /// record another writer stored at the next seq) cannot make every later commit fail.
        var rereadHead = false
    }

    /// Reads the chain's head from the store after a failed commit. Normally it is the head in memory (the failed
    /// commit stored nothing); if another writer appended to this chain (two instances given one `[audit] instance`),
    /// the chain goes on after its records, which is logged: it still verifies, with two writers' records in it.
    private func rereadHead(_ round: inout Round) async {
        do {
            let stored = try await store.auditHead(chain: settings.chain)
            round.rereadHead = false
            let inMemory = round.chain?.head
            if (stored?.seq ?? 0) == (inMemory?.seq ?? 0), stored == nil || stored == inMemory { return }
            logger.critical(
                """
                Another writer appended to this instance's audit chain: give every instance its own [audit] \
                instance; this one goes on after the stored head
                """,
                metadata: [
                    "audit.chain": "\(settings.chain)", "audit.seq": "\(stored?.seq ?? 0)",
                    "audit.seq_in_memory": "\(round.chain?.head.seq ?? 0)",
                ])
            round.chain = AuditChain(chain: settings.chain, head: stored)
        } catch {
            // The store is still failing: the next attempt reads it again.
        }
    }

    /// Signs the head alone when it is unsigned; a failed attempt is tried again an interval later, not in a loop.
    private func signHead(_ round: inout Round) async {
        if let head = round.chain?.head, head.seq > round.signedSeq, let checkpoint = checkpoint(of: head) {
            do {
                try await store.commit(StoreBatch(checkpoints: [checkpoint]))
                round.signedSeq = head.seq
                checkpointObserver?(checkpoint)
            } catch {
                logger.error("An audit checkpoint could not be stored", metadata: ["error": "\(error)"])
            }
        }
        round.lastCheckpoint = clock.now
    }

    /// Commits the held writes and `submissions` together, resuming each submitter as its writes are decided.
    ///
    /// - Returns: How many of `submissions`' writes left the queue (committed, failed or held), to free their room.
    private func commit(_ newSubmissions: [Submission], in round: inout Round) async -> Int {
        let written = newSubmissions.reduce(0) { $0 + $1.size }
        if round.rereadHead { await rereadHead(&round) }
        let heldBefore = round.held.count
        var submissions = round.held + newSubmissions
        round.held = []
        while !submissions.isEmpty {
            var batch = StoreBatch()
            var next = round.chain
            for submission in submissions {
                batch.append(submission.batch)
                for entry in submission.audit {
                    if let record = next?.append(entry.normalisedForStorage()) { batch.audit.append(record) }
                }
            }
            if let head = next?.head, head.seq > round.signedSeq,
                clock.now - round.lastCheckpoint >= settings.checkpointInterval,
                let checkpoint = checkpoint(of: head)
            {
                batch.checkpoints.append(checkpoint)
            }
            do {
                let started = clock.now
                try await store.commit(batch)
                commitDuration.record(clock.now - started)
                lastCommitFailed.store(false, ordering: .relaxed)
                round.chain = next
                if let signed = batch.checkpoints.last {
                    round.signedSeq = signed.seq
                    round.lastCheckpoint = clock.now
                    checkpointObserver?(signed)
                }
                commits.increment()
                batchSize.record(submissions.reduce(0) { $0 + $1.size })
                for index in submissions.indices { submissions[index].resume() }
                if heldBefore > 0 {
                    logger.notice(
                        "Writes held since a failed commit are stored", metadata: ["requests": "\(heldBefore)"])
                }
                submissions = []
            } catch StoreError.receiptsAlreadyFinal(let ids) {
                // Receipts another relay closed first: their submissions get the error (they record nothing),
                // the others are committed again without them, with the chain advanced anew from its head.
                let closed = Set(ids)
                var refused = submissions.filter { $0.closesAny(of: closed) }
                submissions.removeAll { $0.closesAny(of: closed) }
                if refused.isEmpty {
                    // A store naming receipts no submission closes: fail them all rather than loop.
                    refused = submissions
                    submissions = []
                }
                for index in refused.indices {
                    refused[index].resume(throwing: StoreError.receiptsAlreadyFinal(ids))
                }
            } catch {
                lastCommitFailed.store(true, ordering: .relaxed)
                failedCommits.increment()
                round.rereadHead = settings.enabled
                for index in submissions.indices where submissions[index].ifFailed == .fail {
                    submissions[index].resume(throwing: error)
                }
                round.held = submissions.filter { $0.ifFailed == .hold }
                for index in round.held.indices { round.held[index].resume() }
                round.backoff = min(
                    retryBackoff.longest, round.backoff == .zero ? retryBackoff.first : round.backoff * 2)
                round.retryAt = clock.now + round.backoff
                logger.error(
                    "Store commit failed",
                    metadata: [
                        "error": "\(error)", "requests": "\(submissions.count)",
                        "held_writes": "\(round.held.reduce(0) { $0 + $1.size })",
                    ]
                )
                submissions = []
            }
        }
        if round.held.isEmpty {
            round.backoff = .zero
            round.retryAt = nil
        }
        let held = round.held.reduce(0) { $0 + $1.size }
        unsaved.store(held, ordering: .relaxed)
        unsavedGauge.record(held)
        return written
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

    /// Signs the heads of other instances' chains, whose delivery journal this instance took over: an instance whose
    /// leases ran out has most likely died without its closing checkpoint. Its head is read from the store and
    /// signed as it stands; if the instance is alive after all and appends meanwhile, the checkpoint is still true of
    /// the records it covers. A head already signed with this key is not signed twice (the store keeps one
    /// checkpoint per chain, seq and key). Needs a signing key; a failure is logged and the next take-over tries again.
    package func signHeads(ofChains chains: Set<String>) async {
        guard settings.enabled, settings.signingKey != nil else { return }
        for chain in chains.sorted() where chain != settings.chain {
            do {
                guard let head = try await store.auditHead(chain: chain), head.seq > 0,
                    let checkpoint = checkpoint(of: head)
                else { continue }
                try await store.commit(StoreBatch(checkpoints: [checkpoint]))
                checkpointObserver?(checkpoint)
                logger.notice(
                    "Signed the audit chain head of an instance whose delivery journal this instance took over",
                    metadata: ["audit.chain": "\(chain)", "audit.seq": "\(head.seq)"])
            } catch {
                logger.error(
                    "The audit chain head of an instance whose journal was taken over could not be signed",
                    metadata: ["audit.chain": "\(chain)", "error": "\(error)"])
            }
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

/// Writes withdrawn because no commit took them before their submitter stopped waiting (`[store] request_timeout_ms`):
/// nothing of them was written.
package struct StoreTimeout: Error, CustomStringConvertible {
    package var description: String { "the store did not take the writes in time; nothing of them was written" }
}

/// A write submitted after the commit queue closed (the relay is shutting down).
package struct CommitQueueClosed: Error, CustomStringConvertible {
    package var description: String { "the relay is shutting down; the store takes no more writes" }
}
