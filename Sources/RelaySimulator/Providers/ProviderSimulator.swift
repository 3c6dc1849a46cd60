internal import Foundation
internal import NIOHTTP2
internal import Synchronization

/// A loopback upstream that answers like APNs, FCM HTTP v1 (with Google's OAuth token endpoint) and Expo, closely
/// enough to test the relay's senders against: an independent oracle that shares no code with `Relay*` targets.
///
/// ## Overview
///
/// One ``HTTP2TestServer`` (TLS, ALPN `h2`) on one port serves every provider; requests are routed by path:
///
/// | Path | Provider |
/// |---|---|
/// | `/3/device/<token>` | ``SimulatedProvider/apns`` (``APNsEndpoint``) |
/// | `/v1/projects/<id>/messages:send` | ``SimulatedProvider/fcm`` (``FCMEndpoint``) |
/// | `/token` | ``SimulatedProvider/fcmToken`` (``FCMTokenEndpoint``) |
/// | `/--/api/v2/push/send`, `/--/api/v2/push/getReceipts` | ``SimulatedProvider/expoSend``, ``SimulatedProvider/expoReceipts`` (``ExpoEndpoint``) |
/// | `GET /simulator/last-payload/<token>` | none: the simulator's own, ``lastPayload(for:)`` as JSON (not recorded) |
///
/// So ``baseURL`` is the APNs endpoint, the FCM endpoint and the Expo base URL alike, and ``fcmTokenURI`` goes into
/// the service-account file. Each endpoint checks credentials (APNs ES256 provider tokens with connection binding,
/// RS256 OAuth assertions, Expo access tokens), headers and payloads as its provider does, and answers with the
/// provider's status codes and bodies. Tokens whose first four characters are a ``ScriptedToken`` code fail in
/// scripted ways (dead, invalid, throttled once, flaky, slow…); ``Configuration/errorRate`` adds random transient
/// failures and ``Configuration/latency`` a delay; ``injectFaults(_:)`` switches an outage, a 503 storm, resets,
/// stalls or cut connections on and off (``FaultInjection``). ``received()`` lists every request with its answer;
/// ``ignoredByDevice()`` the pushes APNs accepts but a device would drop (a Live Activity push without its
/// `timestamp`…), which a relay must never send; ``lastPayload(for:)`` the last payload each device token was sent,
/// also when recording is off (for the demo, `GET /simulator/last-payload/<token>` on the same server answers it);
/// ``Configuration/recorder`` writes a line per notification answered into a file as it goes (``SimulatorRecorder``),
/// also when recording is off.
///
/// ```swift
/// let credentials = try SimulatorCredentials()
/// let simulator = try await ProviderSimulator.start(configuration: credentials.simulatorConfiguration())
/// // Point the relay at simulator.baseURL, trusting simulator.caFilePath; send; then:
/// #expect(simulator.received(.apns).map(\.status) == [503, 503, 200])
/// try await simulator.shutdown()
/// ```
///
/// ### Implementation
///
/// The server calls ``handle(_:)`` concurrently from tasks. Each endpoint first *inspects* the request without any
/// lock (parsing JSON and forms, verifying signatures), then *decides* under the one `Mutex` that guards
/// ``State`` with a `mutating func` returning the response (binding, counters, issued tokens, receipts), recording the
/// request in the same critical section. The answer goes back as ``HTTP2TestAction/respond(_:delay:)``, so latency
/// is an event-loop timer, not a sleeping task.
package final class ProviderSimulator: Sendable {
    /// The configuration the simulator was started with (its server part as resolved: the bound port).
    package let configuration: Configuration
    /// The underlying server, for its ``HTTP2TestServer/statistics`` and scripted connection events.
    package let server: HTTP2TestServer
    private let core: Core

    private init(configuration: Configuration, server: HTTP2TestServer, core: Core) {
        self.configuration = configuration
        self.server = server
        self.core = core
    }

    /// `https://127.0.0.1:<port>`: the APNs, FCM and Expo endpoint alike.
    package var baseURL: String {
        self.server.baseURL
    }

    /// `baseURL + "/token"`: the `token_uri` of the service account, and the `aud` its assertions must carry.
    package var fcmTokenURI: String {
        self.baseURL + "/token"
    }

    /// The PEM file of the CA that signed the server's certificate.
    package var caFilePath: String {
        self.server.caFilePath
    }

    /// The bound port.
    package var port: Int {
        self.server.port
    }

    /// Starts a simulator.
    ///
    /// - Throws: When the server cannot start (see ``HTTP2TestServer/start(configuration:handler:)``).
    package static func start(configuration: Configuration = .init()) async throws -> ProviderSimulator {
        let core = Core(configuration: configuration)
        let server = try await HTTP2TestServer.start(configuration: configuration.server) { request in
            core.handle(request)
        }
        core.tokenURI.withLock { $0 = server.baseURL + "/token" }
        var resolved = configuration
        resolved.server = server.configuration
        return ProviderSimulator(configuration: resolved, server: server, core: core)
    }

    /// Every request received so far, with the answer given, in the order the answers were decided.
    package func received() -> [SimulatedRequest] {
        self.core.state.withLock { $0.log }
    }

    /// The requests received so far by one endpoint, in order.
    package func received(_ provider: SimulatedProvider) -> [SimulatedRequest] {
        self.core.state.withLock { state in state.log.filter { $0.provider == provider } }
    }

    /// The pushes answered 200 that a device would ignore (``SimulatedRequest/ignoredByDevice`` is set), in order:
    /// the most recent 1,000, whether or not ``Configuration/recordsRequests`` is on. A relay should never send one.
    package func ignoredByDevice() -> [SimulatedRequest] {
        self.core.state.withLock { $0.ignored }
    }

    /// The last payload accepted for a device token (APNs: answered 200; FCM: 200 to a message with this `token`;
    /// Expo: an `ok` ticket for this `to`), whether or not ``Configuration/recordsRequests`` is on; `nil` when the
    /// simulator has accepted none, or has forgotten it (it keeps ``Configuration/lastPayloadLimit`` tokens).
    ///
    /// - Parameter token: The token as in the request: APNs hex (either case), the FCM registration token, or the
    ///   whole Expo `ExponentPushToken[…]`.
    package func lastPayload(for token: String) -> SimulatedPayload? {
        self.core.lastPayload(for: token)
    }

    /// Switches fault injection on with `injection` (replacing any before it), or off with `nil`: see
    /// ``FaultInjection``. Requests already being answered keep their answers.
    package func injectFaults(_ injection: FaultInjection?) {
        self.core.faults.set(injection)
    }

    /// How many send requests got an injected fault since the simulator started.
    package var faultsInjected: Int {
        self.core.faults.injected
    }

    /// Returns once ``faultsInjected`` has reached `count`: the way for a test to know a fault that leaves no answer
    /// (a stall, a reset) has been decided, without sleeping. Returns early when the task is cancelled.
    package func waitForFaults(atLeast count: Int) async {
        await self.core.faults.waitForFaults(atLeast: count)
    }

    /// Stops the server (see ``HTTP2TestServer/shutdown()``); calling it again does nothing.
    package func shutdown() async throws {
        try await self.server.shutdown()
    }
}

extension ProviderSimulator {
    /// The request handler and everything it shares between requests.
    final class Core: Sendable {
        let configuration: Configuration
        let state: Mutex<State>
        /// ``ProviderSimulator/fcmTokenURI``, known once the server is bound.
        let tokenURI = Mutex("")
        /// ``ProviderSimulator/injectFaults(_:)``.
        let faults = FaultSwitch()
        private let apns: APNsEndpoint
        private let fcm: FCMEndpoint
        private let fcmToken: FCMTokenEndpoint
        private let expo: ExpoEndpoint

        init(configuration: Configuration) {
            self.configuration = configuration
            self.state = Mutex(State(lastPayloadLimit: configuration.lastPayloadLimit))
            self.apns = APNsEndpoint(configuration: configuration.apns)
            self.fcm = FCMEndpoint(configuration: configuration.fcm)
            self.fcmToken = FCMTokenEndpoint(configuration: configuration.fcm)
            self.expo = ExpoEndpoint(configuration: configuration.expo)
        }

        /// Routes, inspects, decides, records; returns the answer with its delay.
        func handle(_ request: HTTP2TestRequest) -> HTTP2TestAction {
            let now = Date()
            switch Route(path: request.path) {
            case .apns(let deviceToken):
                let fault = self.faults.next()
                if let action = Self.action(for: fault) { return action }
                let inspection = self.apns.inspect(request, deviceToken: deviceToken)
                let transientError = fault == .serviceUnavailable || self.rollTransientError()
                let slow = isSlow(inspection.deviceToken)
                return self.answer(request, .apns, slow: slow, ignoredByDevice: inspection.ignoredByDevice) { state in
                    state.apnsRequestArrived(
                        inspection, connectionID: request.connectionID, transientError: transientError, now: now)
                } lines: { response, ignored in
                    SimulatorRecorder.Line.apns(inspection, response: response, ignoredByDevice: ignored, time: now)
                }
            case .fcmSend(let projectID):
                let fault = self.faults.next()
                if let action = Self.action(for: fault) { return action }
                let inspection = self.fcm.inspect(request, projectID: projectID)
                let transientError = fault == .serviceUnavailable || self.rollTransientError()
                return self.answer(request, .fcm, slow: isSlow(inspection.deviceToken ?? "")) { state in
                    state.fcmSendArrived(
                        inspection, projectID: self.configuration.fcm.projectID, transientError: transientError,
                        now: now)
                } lines: { response, _ in
                    SimulatorRecorder.Line.fcm(inspection, response: response, time: now)
                }
            case .fcmToken:
                let tokenURI = self.tokenURI.withLock { $0 }
                let inspection = self.fcmToken.inspect(request, tokenURI: tokenURI, now: now)
                return self.answer(request, .fcmToken, slow: false) { state in
                    state.fcmTokenRequested(inspection, now: now)
                }
            case .expoSend:
                let fault = self.faults.next()
                if let action = Self.action(for: fault) { return action }
                let inspection = self.expo.inspectSend(request)
                let transientError = fault == .serviceUnavailable || self.rollTransientError()
                let slow = inspection.recipients.contains { isSlow($0.token ?? "") }
                return self.answer(request, .expoSend, slow: slow) { state in
                    state.expoSendArrived(inspection, transientError: transientError)
                } lines: { response, _ in
                    SimulatorRecorder.Line.expo(inspection, response: response, time: now)
                }
            case .expoReceipts:
                let inspection = self.expo.inspectReceipts(request)
                return self.answer(request, .expoReceipts, slow: false) { state in
                    state.expoReceiptsRequested(inspection)
                }
            case .lastPayload(let token):
                return .respond(self.lastPayloadAnswer(request, token: token), delay: .zero)
            case .unknown:
                let body: SimulatorJSON = ["error": "No simulated provider endpoint at this path."]
                return .respond(.json(404, body.text), delay: self.delay(slow: false))
            }
        }

        /// Decides under the lock and records the request with its answer; `ignoredByDevice` counts only when the
        /// answer is 200. With a ``Configuration/recorder``, then writes the notifications' `lines` (given the answer
        /// and `ignoredByDevice` as recorded), outside the lock.
        private func answer(
            _ request: HTTP2TestRequest,
            _ provider: SimulatedProvider,
            slow: Bool,
            ignoredByDevice: String? = nil,
            decide: (inout State) -> HTTP2TestResponse,
            lines: (HTTP2TestResponse, _ ignoredByDevice: String?) -> [SimulatorRecorder.Line] = { _, _ in [] }
        ) -> HTTP2TestAction {
            let response = self.state.withLock { state in
                let response = decide(&state)
                let ignored = response.status == 200 ? ignoredByDevice : nil
                if self.configuration.recordsRequests || ignored != nil {
                    state.record(
                        SimulatedRequest(
                            provider: provider, request: request, response: response, ignoredByDevice: ignored),
                        recordsRequests: self.configuration.recordsRequests)
                }
                return response
            }
            if let recorder = self.configuration.recorder {
                recorder.write(lines(response, response.status == 200 ? ignoredByDevice : nil))
            }
            return .respond(response, delay: self.delay(slow: slow))
        }

        func lastPayload(for token: String) -> SimulatedPayload? {
            self.state.withLock { state in
                state.lastPayloads.payload(for: token) ?? state.lastPayloads.payload(for: token.lowercased())
            }
        }

        /// `GET /simulator/last-payload/<token>` (the token percent-decoded): 200 with
        /// ``SimulatedPayload/document``, 404 when there is none, 405 for another method.
        private func lastPayloadAnswer(_ request: HTTP2TestRequest, token: Substring) -> HTTP2TestResponse {
            guard request.method == "GET" else {
                let body: SimulatorJSON = ["error": "Use GET."]
                return .json(405, body.text, headers: [(name: "allow", value: "GET")])
            }
            let token = String(token).removingPercentEncoding ?? String(token)
            guard let payload = self.lastPayload(for: token) else {
                let body: SimulatorJSON = ["error": "No payload has been accepted for this token."]
                return .json(404, body.text)
            }
            return .json(200, payload.document.text)
        }

        /// What the server does instead of answering, for an injected fault that is not an answer.
        private static func action(for fault: FaultInjection.Fault?) -> HTTP2TestAction? {
            switch fault {
            case .resetStream?: .resetStream(code: .internalError)
            // Answered only after a day: long after any client's deadline, and cancelled when the server stops.
            case .stall?: .respond(.json(503, "{}"), delay: .seconds(86_400))
            case .dropConnection?: .dropConnection
            case .serviceUnavailable?, nil: nil
            }
        }

        private func rollTransientError() -> Bool {
            self.configuration.errorRate > 0 && Double.random(in: 0..<1) < self.configuration.errorRate
        }

        /// ``Configuration/slowLatency`` for slow tokens, else ``Configuration/latency`` plus uniform jitter.
        private func delay(slow: Bool) -> Duration {
            if slow {
                return self.configuration.slowLatency
            }
            let jitter = self.configuration.latencyJitter
            guard jitter > .zero else {
                return self.configuration.latency
            }
            let (seconds, attoseconds) = jitter.components
            let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            return self.configuration.latency + .nanoseconds(Int64.random(in: 0...nanoseconds))
        }
    }

    /// Which endpoint a path names (the query is ignored, as Expo ignores `?useFcmV1=…`).
    enum Route: Hashable {
        /// `/3/device/<token>`; `nil` for any other path under `/3/` (answered `BadPath`).
        case apns(deviceToken: Substring?)
        /// `/v1/projects/<id>/messages:send`; `nil` for any other path under `/v1/`.
        case fcmSend(projectID: Substring?)
        case fcmToken
        case expoSend
        case expoReceipts
        /// `/simulator/last-payload/<token>` (not percent-decoded yet).
        case lastPayload(token: Substring)
        case unknown

        init(path: String) {
            let path = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
            if path.hasPrefix(lastPayloadPrefix), path.count > lastPayloadPrefix.count,
                !path.dropFirst(lastPayloadPrefix.count).contains("/")
            {
                self = .lastPayload(token: path.dropFirst(lastPayloadPrefix.count))
            } else if path.hasPrefix("/3/") {
                let token = path.dropFirst(apnsPrefix.count)
                self = .apns(deviceToken: path.hasPrefix(apnsPrefix) && !token.contains("/") ? token : nil)
            } else if path.hasPrefix("/v1/") {
                let project = path.dropFirst(fcmPrefix.count).dropLast(fcmSuffix.count)
                let matches =
                    path.hasPrefix(fcmPrefix) && path.hasSuffix(fcmSuffix)
                    && path.count > fcmPrefix.count + fcmSuffix.count && !project.contains("/")
                self = .fcmSend(projectID: matches ? project : nil)
            } else {
                switch path {
                case "/token": self = .fcmToken
                case "/--/api/v2/push/send": self = .expoSend
                case "/--/api/v2/push/getReceipts": self = .expoReceipts
                default: self = .unknown
                }
            }
        }
    }
}

private func isSlow(_ token: String) -> Bool {
    ScriptedToken(token: token) == .slow
}

private let apnsPrefix = "/3/device/"
private let fcmPrefix = "/v1/projects/"
private let fcmSuffix = "/messages:send"
private let lastPayloadPrefix = "/simulator/last-payload/"
