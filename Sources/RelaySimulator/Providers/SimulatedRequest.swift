/// Which simulated endpoint a request reached.
package enum SimulatedProvider: String, Sendable, Hashable, CaseIterable {
    /// `POST /3/device/<token>` (and any other path under `/3/`, answered `BadPath`).
    case apns
    /// `POST /v1/projects/<id>/messages:send` (and any other path under `/v1/`).
    case fcm
    /// `POST /token`: Google's OAuth 2 token endpoint (JWT bearer grant).
    case fcmToken
    /// `POST /--/api/v2/push/send`.
    case expoSend
    /// `POST /--/api/v2/push/getReceipts`.
    case expoReceipts
}

/// A request the simulator received, with the answer it gave, for a test's assertions.
package struct SimulatedRequest: Sendable {
    package var provider: SimulatedProvider
    /// The `:method` pseudo-header.
    package var method: String
    /// The `:path` pseudo-header, query included.
    package var path: String
    /// The regular headers in arrival order, names lowercased.
    package var headers: [(name: String, value: String)]
    package var body: [UInt8]
    /// What the simulator answered (before any delay).
    package var response: HTTP2TestResponse
    /// The TCP connection that carried the request, numbered from 1 in accept order.
    package var connectionID: Int
    /// The HTTP/2 stream of the request.
    package var streamID: Int
    /// Why a device would ignore this push although the provider accepted it (answered 200), for example
    /// `"liveactivity without timestamp"`; `nil` for every other request. See ``APNsEndpoint`` for the rules, and
    /// ``ProviderSimulator/ignoredByDevice()`` for the list that is kept even when recording is off.
    package var ignoredByDevice: String?

    /// The `:status` of the answer.
    package var status: Int {
        self.response.status
    }

    /// The value of the first header called `name` (compared case-insensitively), or `nil`.
    package func header(_ name: String) -> String? {
        let name = name.lowercased()
        return self.headers.first { $0.name == name }?.value
    }

    /// The body decoded as UTF-8, replacing invalid sequences.
    package var bodyText: String {
        String(decoding: self.body, as: UTF8.self)
    }

    /// The body parsed as JSON, or `nil` when it is not JSON (an OAuth token request is form-encoded).
    package var json: SimulatorJSON? {
        SimulatorJSON(parsing: self.body)
    }

    /// The answer's body parsed as JSON, or `nil` when it is empty or not JSON.
    package var responseJSON: SimulatorJSON? {
        SimulatorJSON(parsing: self.response.body)
    }

    init(
        provider: SimulatedProvider,
        request: HTTP2TestRequest,
        response: HTTP2TestResponse,
        ignoredByDevice: String? = nil
    ) {
        self.provider = provider
        self.method = request.method
        self.path = request.path
        self.headers = request.headers
        self.body = request.body
        self.response = response
        self.connectionID = request.connectionID
        self.streamID = request.streamID
        self.ignoredByDevice = ignoredByDevice
    }
}
