package import RelayStore

extension PostgresStore {
    /// One wait of ``waitUntilReachable(within:onWait:)``: the database did not answer yet, and is asked again after
    /// ``retryIn``.
    package struct ConnectWait: Sendable, Equatable {
        /// 1 for the wait after the first try.
        package var attempt: Int
        /// How long the store has waited so far.
        package var waited: Duration
        /// How long until the next try.
        package var retryIn: Duration
        /// Why the last try failed: postgres-nio's error (never the URL), or that no connection came in time.
        package var reason: String
    }

    /// The longest wait between two tries.
    package static let maximumConnectBackOff: Duration = .seconds(30)
    /// The longest one try waits for a connection by default; postgres-nio's pool goes on connecting in the
    /// background between tries.
    package static let connectAttemptTimeout: Duration = .seconds(5)

    /// The back-off before try `attempt + 1`: 1 s, 2 s, 4 s, … at most ``maximumConnectBackOff``.
    package static func connectBackOff(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt - 1, 0), 16)
        return min(.seconds(1 << exponent), maximumConnectBackOff)
    }

    /// Waits until the database accepts a connection: a relay that starts before its database (compose, a rebooted
    /// host) waits for it instead of failing. Each try waits up to `attemptTimeout` for a connection; between tries
    /// the store waits with exponential back-off (``connectBackOff(afterAttempt:)``), telling `onWait` each time.
    ///
    /// - Throws: ``StoreError/unavailable(_:)`` naming the address, the user and the database (never the password)
    ///   once `timeout` has passed without a connection.
    package func waitUntilReachable(
        within timeout: Duration,
        attemptTimeout: Duration = connectAttemptTimeout,
        onWait: (ConnectWait) -> Void = { _ in }
    ) async throws {
        start()
        let clock = ContinuousClock()
        let started = clock.now
        let deadline = started.advanced(by: timeout)
        var attempt = 0
        var reason = "no connection"
        while true {
            attempt += 1
            let remaining = clock.now.duration(to: deadline)
            if remaining > .zero {
                guard let failure = await tryConnecting(within: min(attemptTimeout, remaining)) else {
                    return
                }
                reason = failure
            }
            try Task.checkCancellation()
            let left = clock.now.duration(to: deadline)
            guard left > .zero else {
                throw StoreError.unavailable(
                    "no connection to PostgreSQL at \(configuration.host):\(configuration.port) within "
                        + "\(timeout.components.seconds) seconds ([store] connect_timeout_seconds; user "
                        + "\(configuration.username), database \(configuration.database)): \(reason)"
                )
            }
            let pause = min(Self.connectBackOff(afterAttempt: attempt), left)
            onWait(
                ConnectWait(attempt: attempt, waited: started.duration(to: clock.now), retryIn: pause, reason: reason))
            try await Task.sleep(for: pause)
        }
    }

    /// `nil` when a connection answered within `timeout`, else why not.
    private func tryConnecting(within timeout: Duration) async -> String? {
        await withTaskGroup(of: String?.self) { group in
            group.addTask {
                do {
                    try await self.ping()
                    return nil
                } catch is CancellationError {
                    return "no connection within \(timeout)"
                } catch {
                    return "\(error)"
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return "no connection within \(timeout)"
            }
            // The loser is cancelled: a cancelled wait for a connection leaves the pool's queue at once.
            defer { group.cancelAll() }
            return await group.next() ?? "no connection"
        }
    }
}
