import Hummingbird
import Logging
import RelayApplication
import RelayCore
import RelayStore

/// `GET /healthz` (alive), `GET /readyz` (store reachable and committing, providers configured), `GET /metrics`
/// (Prometheus).
///
/// `/readyz` answers 503 naming what fails in `failing` (`store`: its probe failed or did not answer within
/// ``RelaySettings/readinessTimeout``; `commits`: the last commit failed, or writes of failed commits are held
/// (``CommitQueue/unsavedWrites``); `queue`: shutting down; `providers`: none
/// configured) with a sentence each in `detail`. The probe is bounded: see ``StoreProbe``.
struct HealthAPI: Sendable {
    let relay: Relay
    let metrics: (@Sendable () async -> String)?
    private let probe: StoreProbe

    init(relay: Relay, metrics: (@Sendable () async -> String)?) {
        self.relay = relay
        self.metrics = metrics
        let store = relay.store
        probe = StoreProbe { try await store.ping() }
    }

    func addRoutes(to router: Router<RelayRequestContext>) {
        router.get("/healthz") { _, _ in
            jsonResponse(.object(["status": .string("ok"), "version": .string(RelayVersion.current)]))
        }
        router.get("/readyz") { _, context in
            await readiness(logger: context.logger)
        }
        router.get("/metrics") { _, _ in
            guard let metrics else { throw RelayHTTPError.notFound }
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: await metrics())))
        }
    }

    /// The readiness answer: 200 when nothing fails, else 503 naming what does.
    private func readiness(logger: Logger) async -> Response {
        var failing: [String] = []
        var details: [String] = []
        var store = "ok"
        let timeout = relay.settings.readinessTimeout
        switch await probe.check(within: timeout) {
        case .answered:
            break
        case .failed(let error):
            store = "unavailable"
            failing.append("store")
            details.append("the store's probe failed")
            logger.warning("Readiness: the store's probe failed", metadata: ["error": "\(error)"])
        case .timedOut:
            store = "unavailable"
            failing.append("store")
            let milliseconds = Int((timeout / .milliseconds(1)).rounded())
            details.append("the store did not answer within \(milliseconds) ms")
            logger.warning("Readiness: the store did not answer in time", metadata: ["timeout_ms": "\(milliseconds)"])
        }
        if relay.commits.isFailing {
            failing.append("commits")
            let unsaved = relay.commits.unsavedWrites
            details.append(
                unsaved > 0
                    ? "\(unsaved) writes of failed commits are held in memory until the store takes them"
                    : "the last commit to the store failed; the first that succeeds ends this")
        }
        let accepting = relay.queue.isAccepting
        if !accepting {
            failing.append("queue")
            details.append("the relay is shutting down")
        }
        let providers = relay.configuredProviders.map(\.rawValue).sorted()
        if providers.isEmpty {
            failing.append("providers")
            details.append("no provider is configured")
        }
        var body: [String: JSONValue] = [
            "status": .string(failing.isEmpty ? "ready" : "not_ready"), "store": .string(store),
            "providers": .array(providers.map(JSONValue.string)), "accepting": .bool(accepting),
            "failing": .array(failing.map(JSONValue.string)),
        ]
        if !details.isEmpty { body["detail"] = .string(details.joined(separator: "; ")) }
        return jsonResponse(.object(body), status: failing.isEmpty ? .ok : .serviceUnavailable)
    }
}
