import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

/// `GET /healthz` (alive), `GET /readyz` (store reachable, providers configured), `GET /metrics` (Prometheus).
struct HealthAPI: Sendable {
    let relay: Relay
    let metrics: (@Sendable () async -> String)?

    func addRoutes(to router: Router<RelayRequestContext>) {
        router.get("/healthz") { _, _ in
            jsonResponse(.object(["status": .string("ok"), "version": .string(RelayVersion.current)]))
        }
        router.get("/readyz") { _, _ in
            var ready = relay.queue.isAccepting
            var store = "ok"
            do {
                try await relay.store.ping()
            } catch {
                store = "unavailable"
                ready = false
            }
            let providers = relay.configuredProviders.map(\.rawValue).sorted()
            if providers.isEmpty { ready = false }
            return jsonResponse(
                .object([
                    "status": .string(ready ? "ready" : "not_ready"), "store": .string(store),
                    "providers": .array(providers.map(JSONValue.string)),
                    "accepting": .bool(relay.queue.isAccepting),
                ]),
                status: ready ? .ok : .serviceUnavailable
            )
        }
        router.get("/metrics") { _, _ in
            guard let metrics else { throw RelayHTTPError.notFound }
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: await metrics())))
        }
    }
}
