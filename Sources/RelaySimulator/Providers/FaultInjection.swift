internal import Synchronization

/// A fault the simulator injects into a share of the send requests while a test has it switched on: an upstream
/// outage (``share`` 1), a 503 storm, resets, stalls or cut connections.
///
/// It is a switch, not a timer: ``ProviderSimulator/injectFaults(_:)`` turns it on, and again with `nil` off, so a
/// test decides when an outage ends by what it has seen (attempts made, the client's state), never by the clock.
/// Send requests are APNs pushes, FCM sends and Expo sends; the OAuth token endpoint and Expo receipts are never
/// faulted. The faulted requests are spread evenly, so a share gives the same sequence every run: with a share of 0.3,
/// the 4th, 7th and 10th of every ten.
///
/// | Fault | What the client sees |
/// |---|---|
/// | ``Fault/serviceUnavailable`` | The provider's own 503 (APNs `ServiceUnavailable`, FCM `UNAVAILABLE`, Expo a whole-request 503), recorded in ``ProviderSimulator/received()`` |
/// | ``Fault/resetStream`` | `RST_STREAM(INTERNAL_ERROR)` instead of an answer: the outcome is unknown |
/// | ``Fault/stall`` | No answer, ever (until the server shuts down): the client's own deadline must end it |
/// | ``Fault/dropConnection`` | The request's TCP connection is reset, with every stream on it |
package struct FaultInjection: Sendable, Hashable {
    package enum Fault: Sendable, Hashable {
        case serviceUnavailable
        case resetStream
        case stall
        case dropConnection
    }

    package var fault: Fault
    /// The share of send requests that get the fault, from 0 (none) to 1 (all: an outage).
    package var share: Double

    package init(_ fault: Fault, share: Double = 1) {
        self.fault = fault
        self.share = min(max(share, 0), 1)
    }

    /// Every send request fails with `fault`.
    package static func outage(_ fault: Fault = .serviceUnavailable) -> FaultInjection {
        FaultInjection(fault, share: 1)
    }
}

extension ProviderSimulator {
    /// The switch of ``FaultInjection`` and its counters, shared by the request handlers.
    final class FaultSwitch: Sendable {
        private struct State {
            var injection: FaultInjection?
            /// Send requests seen while the current injection is on.
            var seen = 0
            /// Faults injected since the simulator started.
            var injected = 0
            /// Callers of ``waitForFaults(atLeast:)``, by id.
            var waiters: [Int: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
            var nextWaiter = 0
        }

        private let state = Mutex(State())

        func set(_ injection: FaultInjection?) {
            state.withLock { state in
                state.injection = injection
                state.seen = 0
            }
        }

        var injected: Int { state.withLock { $0.injected } }

        /// Counts one send request and returns the fault it gets, if any: the `n`-th request of an injection is
        /// faulted when `⌊n × share⌋` passes an integer, which spreads the faults evenly.
        func next() -> FaultInjection.Fault? {
            let (fault, ready) = state.withLock {
                state -> (FaultInjection.Fault?, [CheckedContinuation<Void, Never>]) in
                guard let injection = state.injection else { return (nil, []) }
                state.seen += 1
                let before = (Double(state.seen - 1) * injection.share).rounded(.down)
                let now = (Double(state.seen) * injection.share).rounded(.down)
                guard now > before else { return (nil, []) }
                state.injected += 1
                let injected = state.injected
                let ready = state.waiters.filter { $0.value.count <= injected }
                for id in ready.keys { state.waiters[id] = nil }
                return (injection.fault, ready.values.map(\.continuation))
            }
            for waiter in ready { waiter.resume() }
            return fault
        }

        /// Returns once at least `count` faults have been injected, or the task is cancelled.
        func waitForFaults(atLeast count: Int) async {
            let id = state.withLock { state in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state in
                        if state.injected >= count || Task.isCancelled { return true }
                        state.waiters[id] = (count, continuation)
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
            }
        }
    }
}
