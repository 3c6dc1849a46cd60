internal import Foundation

extension ProviderSimulator {
    /// Everything the simulated providers remember between requests.
    ///
    /// ### Implementation
    /// A value type behind one `Mutex` in ``ProviderSimulator``. Each endpoint first inspects a request without it
    /// (parsing, signature checks: the expensive part), then decides under the lock with a `mutating func` that
    /// returns the response. Deciding and recording in the same critical section makes ``log`` order equal decision
    /// order, so "the first attempt of a `0429` token" is the first one in ``ProviderSimulator/received()``.
    struct State: Sendable {
        /// Every request with its answer, in decision order (empty when recording is off).
        var log: [SimulatedRequest] = []
        /// Attempts per scripted token (only scripts that count them).
        var attempts: [AttemptKey: Int] = [:]
        /// APNs: the key ID each connection is bound to by its first successfully authenticated request.
        var apnsBindings: [Int: String] = [:]
        /// FCM: issued OAuth access tokens and when each expires.
        var fcmAccessTokens: [String: Date] = [:]
        /// Expo: the receipt of every `ok` ticket, by ticket ID.
        var expoReceipts: [String: SimulatorJSON] = [:]
        /// The last payload each device token was sent (APNs tokens lowercased), kept whether or not requests are
        /// recorded.
        var lastPayloads: LastPayloads
        /// The most recent pushes answered 200 that a device would ignore (at most ``ignoredLimit``), kept whether or
        /// not requests are recorded.
        var ignored: [SimulatedRequest] = []

        /// How many pushes ``ignored`` keeps: a test expects none, so the list only has to show the first few.
        static let ignoredLimit = 1000

        init(lastPayloadLimit: Int = Configuration().lastPayloadLimit) {
            self.lastPayloads = LastPayloads(limit: lastPayloadLimit)
        }

        struct AttemptKey: Hashable, Sendable {
            var provider: SimulatedProvider
            var token: String
        }

        /// Records a request with its answer: in ``log`` when `recordsRequests`, and in ``ignored`` when a device
        /// would ignore it.
        mutating func record(_ request: SimulatedRequest, recordsRequests: Bool) {
            if recordsRequests {
                self.log.append(request)
            }
            if request.ignoredByDevice != nil {
                if self.ignored.count >= Self.ignoredLimit {
                    self.ignored.removeFirst(self.ignored.count - Self.ignoredLimit + 1)
                }
                self.ignored.append(request)
            }
        }

        /// Counts an attempt for `token` and returns the fault its script asks for now, if any.
        mutating func scriptedFault(provider: SimulatedProvider, token: String) -> ScriptedFault? {
            guard let script = ScriptedToken(token: token) else {
                return nil
            }
            guard script.countsAttempts else {
                return script.fault(attempt: 1)
            }
            let key = AttemptKey(provider: provider, token: token)
            let attempt = self.attempts[key, default: 0] + 1
            self.attempts[key] = attempt
            return script.fault(attempt: attempt)
        }
    }
}
