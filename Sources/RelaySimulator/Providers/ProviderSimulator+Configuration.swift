package import Crypto
package import _CryptoExtras

extension ProviderSimulator {
    /// How a ``ProviderSimulator`` listens, which credentials it accepts and how it misbehaves; every property has a
    /// default.
    package struct Configuration: Sendable {
        /// Host, port, stream limit and scripted `GOAWAY`s of the underlying ``HTTP2TestServer``.
        package var server: HTTP2TestServer.Configuration = .init()
        package var apns: APNs = .init()
        package var fcm: FCM = .init()
        package var expo: Expo = .init()
        /// Added to every answer.
        package var latency: Duration = .zero
        /// Plus a uniform random delay in `0...latencyJitter` for every answer.
        package var latencyJitter: Duration = .zero
        /// The fraction (0...1) of send requests answered with a transient error before any other check: APNs 503
        /// `ServiceUnavailable`, FCM 503 `UNAVAILABLE`, Expo whole-request 503. The OAuth token endpoint and Expo
        /// receipts are never failed this way.
        package var errorRate: Double = 0
        /// How long answers for `0555…` ("slow") tokens take, instead of ``latency`` and ``latencyJitter``.
        package var slowLatency: Duration = .seconds(2)
        /// Whether ``ProviderSimulator/received()`` keeps every request. A benchmark that sends millions of pushes
        /// turns it off; scripted counters, receipts and connection bindings work either way.
        package var recordsRequests: Bool = true
        /// For how many device tokens ``ProviderSimulator/lastPayload(for:)`` keeps the last payload (recording on or
        /// off); past that, the token sent to least recently is forgotten.
        package var lastPayloadLimit: Int = 10_000
        /// When set, every notification answered is appended to its file as one JSON line (``SimulatorRecorder``),
        /// whether or not ``recordsRequests`` is on.
        package var recorder: SimulatorRecorder? = nil

        package init(
            server: HTTP2TestServer.Configuration = .init(),
            apns: APNs = .init(),
            fcm: FCM = .init(),
            expo: Expo = .init(),
            latency: Duration = .zero,
            latencyJitter: Duration = .zero,
            errorRate: Double = 0,
            slowLatency: Duration = .seconds(2),
            recordsRequests: Bool = true,
            lastPayloadLimit: Int = 10_000,
            recorder: SimulatorRecorder? = nil
        ) {
            self.server = server
            self.apns = apns
            self.fcm = fcm
            self.expo = expo
            self.latency = latency
            self.latencyJitter = latencyJitter
            self.errorRate = errorRate
            self.slowLatency = slowLatency
            self.recordsRequests = recordsRequests
            self.lastPayloadLimit = lastPayloadLimit
            self.recorder = recorder
        }

        /// What the APNs endpoint accepts.
        package struct APNs: Sendable {
            /// The only `iss` accepted in provider tokens.
            package var teamID: String = "DEMOTEAM01"
            /// The app's bundle ID; `apns-topic` is this plus the push type's suffix.
            package var bundleID: String = "com.example.oncall"
            /// Signing keys by key ID (the JWT `kid`); a token signed by any other key is `InvalidProviderToken`.
            package var keys: [String: P256.Signing.PublicKey] = [:]

            package init(
                teamID: String = "DEMOTEAM01",
                bundleID: String = "com.example.oncall",
                keys: [String: P256.Signing.PublicKey] = [:]
            ) {
                self.teamID = teamID
                self.bundleID = bundleID
                self.keys = keys
            }
        }

        /// What the FCM endpoints accept.
        package struct FCM: Sendable {
            /// The only project in `/v1/projects/{id}/messages:send`; another is `PERMISSION_DENIED`.
            package var projectID: String = "demo-project"
            /// The only `iss` accepted in OAuth assertions.
            package var clientEmail: String = "relay@demo-project.iam.gserviceaccount.com"
            /// The service account's public key; while `nil`, every assertion is refused (`invalid_grant`).
            package var publicKey: _RSA.Signing.PublicKey? = nil

            package init(
                projectID: String = "demo-project",
                clientEmail: String = "relay@demo-project.iam.gserviceaccount.com",
                publicKey: _RSA.Signing.PublicKey? = nil
            ) {
                self.projectID = projectID
                self.clientEmail = clientEmail
                self.publicKey = publicKey
            }
        }

        /// What the Expo endpoints accept.
        package struct Expo: Sendable {
            /// When set, both Expo endpoints require `authorization: Bearer <accessToken>` ("enhanced push security").
            package var accessToken: String? = nil

            package init(accessToken: String? = nil) {
                self.accessToken = accessToken
            }
        }
    }
}
