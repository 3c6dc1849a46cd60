internal import NIOCore
internal import Synchronization

extension HTTP2TestServer {
    /// The state every event loop and the handler tasks share: statistics, the open connections and the waiters of
    /// ``HTTP2TestServer/waitForStatistics(until:)``.
    ///
    /// ### Implementation
    /// One `Mutex` guards it all; every critical section is a few integer updates. Continuations are resumed after the
    /// lock is released, never inside it.
    final class SharedState: Sendable {
        /// One open TCP connection: the channel, plus its event-loop-confined controller.
        struct ConnectionRecord: Sendable {
            let channel: any Channel
            let connection: NIOLoopBound<HTTP2TestConnection>
        }

        private struct Waiter {
            let predicate: @Sendable (HTTP2TestServerStatistics) -> Bool
            let continuation: CheckedContinuation<HTTP2TestServerStatistics, any Error>
        }

        private struct State {
            var statistics = HTTP2TestServerStatistics()
            var nextConnectionID = 1
            var connections: [Int: ConnectionRecord] = [:]
            var waiters: [Int: Waiter] = [:]
            var nextWaiterID = 0
            var isShutDown = false
            /// What new connections advertise; ``HTTP2TestServer/setMaxConcurrentStreams(_:)`` changes it.
            var maxConcurrentStreams: Int
        }

        private let state: Mutex<State>

        init(maxConcurrentStreams: Int) {
            self.state = Mutex(State(maxConcurrentStreams: maxConcurrentStreams))
        }

        var statistics: HTTP2TestServerStatistics {
            self.state.withLock { $0.statistics }
        }

        /// Numbers a new connection and counts it as accepted and open.
        func makeConnectionID() -> Int {
            self.update { state in
                defer { state.nextConnectionID += 1 }
                state.statistics.connectionsAccepted += 1
                state.statistics.connectionsOpen += 1
                return state.nextConnectionID
            }
        }

        /// Registers an open connection, or returns `false` when the server is shutting down.
        func register(_ record: ConnectionRecord, id: Int) -> Bool {
            self.state.withLock { state in
                guard !state.isShutDown else { return false }
                state.connections[id] = record
                return true
            }
        }

        func connectionClosed(id: Int) {
            self.update { state in
                state.connections[id] = nil
                state.statistics.connectionsOpen -= 1
            }
        }

        /// Counts a newly opened stream.
        ///
        /// - Parameter openOnConnection: The streams now open on the stream's connection, this one included.
        func streamOpened(openOnConnection: Int) {
            self.update { state in
                state.statistics.streamsTotal += 1
                state.statistics.streamsInFlight += 1
                state.statistics.maxConcurrentStreamsSeen = max(
                    state.statistics.maxConcurrentStreamsSeen,
                    openOnConnection
                )
                state.statistics.maxConcurrentStreamsTotal = max(
                    state.statistics.maxConcurrentStreamsTotal,
                    state.statistics.streamsInFlight
                )
            }
        }

        /// Starts the two stream peaks again: from now on they count the streams open when a stream opens.
        func resetStreamPeaks() {
            self.update { state in
                state.statistics.maxConcurrentStreamsSeen = 0
                state.statistics.maxConcurrentStreamsTotal = state.statistics.streamsInFlight
            }
        }

        func streamClosed() {
            self.update { $0.statistics.streamsInFlight -= 1 }
        }

        func goAwaySent() {
            self.update { $0.statistics.goAwaysSent += 1 }
        }

        func resetSent() {
            self.update { $0.statistics.resetsSent += 1 }
        }

        /// Counts a client's `RST_STREAM`.
        ///
        /// - Parameter afterResponse: Whether the stream's complete response had been sent.
        func resetReceived(afterResponse: Bool) {
            self.update { state in
                state.statistics.resetsReceived += 1
                if afterResponse {
                    state.statistics.resetsReceivedAfterResponse += 1
                }
            }
        }

        func pingReceived() {
            self.update { $0.statistics.pingsReceived += 1 }
        }

        func settingsChangeSent() {
            self.update { $0.statistics.settingsChangesSent += 1 }
        }

        func connectionStalled() {
            self.update { $0.statistics.connectionsStalled += 1 }
        }

        /// The `SETTINGS_MAX_CONCURRENT_STREAMS` for connections accepted from now on.
        var maxConcurrentStreams: Int {
            get { self.state.withLock { $0.maxConcurrentStreams } }
            set { self.state.withLock { $0.maxConcurrentStreams = newValue } }
        }

        /// The open connections right now.
        var connections: [ConnectionRecord] {
            self.state.withLock { Array($0.connections.values) }
        }

        /// Marks the server as shutting down and returns the connections still open; new ones are refused from now.
        func beginShutdown() -> [ConnectionRecord]? {
            self.state.withLock { state in
                guard !state.isShutDown else { return nil }
                state.isShutDown = true
                return Array(state.connections.values)
            }
        }

        /// Suspends until `predicate` holds for the statistics, and returns the statistics that satisfied it.
        ///
        /// - Throws: `CancellationError` when the calling task is cancelled first.
        func waitForStatistics(
            until predicate: @escaping @Sendable (HTTP2TestServerStatistics) -> Bool
        ) async throws -> HTTP2TestServerStatistics {
            let waiterID = self.state.withLock { state in
                defer { state.nextWaiterID += 1 }
                return state.nextWaiterID
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    enum Registration {
                        case satisfied(HTTP2TestServerStatistics)
                        case cancelled
                        case waiting
                    }
                    let registration = self.state.withLock { state -> Registration in
                        if predicate(state.statistics) {
                            return .satisfied(state.statistics)
                        }
                        if Task.isCancelled {
                            return .cancelled
                        }
                        state.waiters[waiterID] = Waiter(predicate: predicate, continuation: continuation)
                        return .waiting
                    }
                    switch registration {
                    case .satisfied(let statistics):
                        continuation.resume(returning: statistics)
                    case .cancelled:
                        continuation.resume(throwing: CancellationError())
                    case .waiting:
                        break
                    }
                }
            } onCancel: {
                let waiter = self.state.withLock { $0.waiters.removeValue(forKey: waiterID) }
                waiter?.continuation.resume(throwing: CancellationError())
            }
        }

        /// Applies `body` to the state, then resumes the waiters whose predicate now holds (outside the lock).
        private func update<Result>(_ body: (inout State) -> Result) -> Result {
            let (result, ready) = self.state.withLock { state in
                let result = body(&state)
                guard !state.waiters.isEmpty else {
                    return (
                        result,
                        [(CheckedContinuation<HTTP2TestServerStatistics, any Error>, HTTP2TestServerStatistics)]()
                    )
                }
                let statistics = state.statistics
                var ready: [(CheckedContinuation<HTTP2TestServerStatistics, any Error>, HTTP2TestServerStatistics)] = []
                for (id, waiter) in state.waiters where waiter.predicate(statistics) {
                    state.waiters[id] = nil
                    ready.append((waiter.continuation, statistics))
                }
                return (result, ready)
            }
            for (continuation, statistics) in ready {
                continuation.resume(returning: statistics)
            }
            return result
        }
    }
}
