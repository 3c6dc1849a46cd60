/// Whether an upstream (one provider endpoint and its pool) is answering: a circuit breaker that notices an outage
/// from failures across requests, holds sends while it lasts, and probes with one request at a time until the
/// upstream answers again.
///
/// ### Overview
/// - **Closed** (the upstream answers): every request goes. A request that fails the way an outage fails (no
///   connection, a reset, a timeout, a 5xx) counts; an answer (any status below 500 but 429) clears the count. After
///   ``Settings/failureThreshold`` such failures in a row, across every request to the upstream, the circuit opens.
/// - **Open**: nothing is sent. Requests are held, not failed: each waits until the open period ends (or until its
///   own deadline, which is its sender's business). The first open period lasts ``Settings/openDelay``; each probe
///   that fails doubles it, up to ``Settings/maxOpenDelay``.
/// - **Half-open**: the first request to ask after the open period is the probe, and the only request in flight;
///   the others stay held. An answer closes the circuit and every held request goes at once, at full speed; a failed
///   probe opens it again for longer. A probe that ends without a verdict (cancelled, refused by the relay's own
///   pool) lets the next request probe; so does one that has not ended after ``Settings/probeTimeout``.
///
/// Throttling (429) and the relay's own refusals (its pool's queue full, shutdown) say nothing about whether the
/// upstream is up: they are ``Signal/neutral``.
///
/// ### Implementation
/// A value type: each event (``requestReady(now:)``, ``requestEnded(_:probe:now:)``) takes the current instant and
/// returns actions as data; the breaker performs nothing, sleeps on nothing and reads no clock, so tests feed it
/// events at explicit instants. The owner (`UpstreamGate` in RelayProviders) keeps it under a lock, holds requests as
/// the actions say, wakes them all on ``Action/phaseChanged(_:)``, and publishes ``phase`` as a metric.
package struct CircuitBreaker: Sendable, Equatable {
    /// When the circuit opens and how long it stays open.
    package struct Settings: Sendable, Equatable {
        /// Failed requests in a row, across requests, that open the circuit.
        package var failureThreshold: Int
        /// The first open period; it doubles with each failed probe.
        package var openDelay: Duration
        /// The longest open period.
        package var maxOpenDelay: Duration
        /// A probe still without an outcome after this long no longer stops another request from probing.
        package var probeTimeout: Duration

        package init(
            failureThreshold: Int = 10,
            openDelay: Duration = .seconds(1),
            maxOpenDelay: Duration = .seconds(30),
            probeTimeout: Duration = .seconds(30)
        ) {
            self.failureThreshold = max(1, failureThreshold)
            self.openDelay = max(openDelay, .zero)
            self.maxOpenDelay = max(maxOpenDelay, self.openDelay)
            self.probeTimeout = max(probeTimeout, .zero)
        }
    }

    /// The circuit's state as published (`relay_upstream_circuit_state`): 0 closed, 1 half-open, 2 open.
    package enum Phase: Int, Sendable, Equatable, Comparable, CaseIterable {
        case closed = 0
        case halfOpen = 1
        case open = 2

        package static func < (lhs: Phase, rhs: Phase) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// What a request's outcome says about the upstream.
    package enum Signal: Sendable, Equatable {
        /// The upstream answered (any status below 500 but 429, a refusal of the message included).
        case success
        /// It failed as an outage fails: no connection, a reset or a lost connection, a timeout, a 5xx.
        case failure
        /// It says nothing about the upstream: throttling, a cancelled request, the relay's own pool refusing.
        case neutral
    }

    package enum Action: Sendable, Equatable {
        /// Send the request now.
        case send
        /// Send the request as the probe; report its end with `probe: true`.
        case probe
        /// Hold the request: ask again at `until`, or sooner when the phase changes.
        case hold(until: ContinuousClock.Instant)
        /// The circuit entered `phase`: publish it, and wake every held request so that it asks again.
        case phaseChanged(Phase)
        /// Wake every held request so that it asks again; the phase is unchanged (the probe ended without a verdict).
        case releaseHeld
    }

    private enum State: Sendable, Equatable {
        /// `failures`: failed requests in a row.
        case closed(failures: Int)
        /// Nothing goes until `until`; `openings` counts the open periods since the circuit was last closed.
        case open(until: ContinuousClock.Instant, openings: Int)
        /// One probe at a time: `probeSince` is when the probe in flight went, `nil` when none is.
        case halfOpen(probeSince: ContinuousClock.Instant?, openings: Int)
    }

    package let settings: Settings
    private var state: State = .closed(failures: 0)

    package init(settings: Settings = Settings()) {
        self.settings = settings
    }

    package var phase: Phase {
        switch state {
        case .closed: .closed
        case .halfOpen: .halfOpen
        case .open: .open
        }
    }

    /// Whether the circuit is closed with no failure counted: then a request goes (``requestReady(now:)`` returns
    /// ``Action/send`` and changes nothing), and an answer or a neutral end (not a probe's) changes nothing either.
    /// Its owner may take that path without its lock while this holds (the healthy upstream's path).
    package var isQuiet: Bool { state == .closed(failures: 0) }

    /// A request wants to go: send it, send it as the probe, or hold it.
    package mutating func requestReady(now: ContinuousClock.Instant) -> [Action] {
        switch state {
        case .closed:
            return [.send]
        case .open(let until, let openings):
            guard now >= until else { return [.hold(until: until)] }
            state = .halfOpen(probeSince: now, openings: openings)
            return [.phaseChanged(.halfOpen), .probe]
        case .halfOpen(let probeSince, let openings):
            if let probeSince, now < probeSince + settings.probeTimeout {
                return [.hold(until: probeSince + settings.probeTimeout)]
            }
            state = .halfOpen(probeSince: now, openings: openings)
            return [.probe]
        }
    }

    /// A request that was sent has ended; `probe` when it went as the probe.
    package mutating func requestEnded(_ signal: Signal, probe: Bool, now: ContinuousClock.Instant) -> [Action] {
        switch (state, signal) {
        case (.closed, .neutral), (.open, _):
            // While open, what ends was sent before the circuit opened: it tells nothing new.
            return []
        case (.closed, .success):
            state = .closed(failures: 0)
            return []
        case (.closed(let failures), .failure):
            guard failures + 1 >= settings.failureThreshold else {
                state = .closed(failures: failures + 1)
                return []
            }
            return open(openings: 1, now: now)
        case (.halfOpen, .success):
            // Any answer, the probe's or a late one, shows the upstream is back.
            state = .closed(failures: 0)
            return [.phaseChanged(.closed)]
        case (.halfOpen(_, let openings), .failure):
            guard probe else { return [] }
            return open(openings: openings + 1, now: now)
        case (.halfOpen(_, let openings), .neutral):
            guard probe else { return [] }
            // The probe told nothing: the next request probes.
            state = .halfOpen(probeSince: nil, openings: openings)
            return [.releaseHeld]
        }
    }

    /// How long the `openings`-th open period in a row lasts: ``Settings/openDelay`` doubled per earlier one, at most
    /// ``Settings/maxOpenDelay``.
    package func openPeriod(_ openings: Int) -> Duration {
        let exponent = min(max(openings - 1, 0), 30)
        return min(settings.maxOpenDelay, settings.openDelay * Double(1 << exponent))
    }

    private mutating func open(openings: Int, now: ContinuousClock.Instant) -> [Action] {
        state = .open(until: now + openPeriod(openings), openings: openings)
        return [.phaseChanged(.open)]
    }
}
