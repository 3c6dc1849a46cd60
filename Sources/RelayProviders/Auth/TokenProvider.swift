/// A credential sent with every upstream request as a bearer token, cached and shared by every request of its
/// provider: the APNs provider token (``APNsTokenProvider``) and the FCM OAuth access token
/// (``FCMAccessTokenProvider``).
///
/// When the upstream refuses a token as expired (``UpstreamVerdict/refreshCredentialAndRetry(otherwise:)``), the
/// sender asks for another with ``tokenRefused(_:)`` and tries once more. Requests refused with the same token at the
/// same time share one renewal: a provider renews only while the refused token is still its current one.
package protocol TokenProvider: Actor {
    /// The current token, made or fetched when there is none or it is due for renewal.
    func token() async throws -> String

    /// The upstream refused `token` as expired or revoked: a new token, unless another request already replaced it.
    func tokenRefused(_ token: String) async throws -> String
}
