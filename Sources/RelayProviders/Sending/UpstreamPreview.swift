package import Foundation
package import RelayCore
import RelayHTTP2

/// The request a sender would send upstream for one notification, without its credential: what a dry run shows.
///
/// It is built by the sender's own parts (``ProviderUpstream/message(for:now:)`` and
/// ``ProviderUpstream/request(for:token:)``), from the same builders and the same ``PayloadSettings`` as a send, so
/// its path, headers and body are those a send of the notification at the same time would carry, byte for byte; only
/// the `authorization` header is left out (APNs's provider token, FCM's access token, Expo's access token).
package struct UpstreamPreview: Sendable, Equatable {
    package var method: String
    /// The whole URL: the provider's endpoint as configured, then ``path``.
    package var url: String
    /// The URL's path: `/3/device/<token>`, `/v1/projects/<project>/messages:send`, `/--/api/v2/push/send`.
    package var path: String
    /// The headers in the order they are sent, without `authorization`.
    package var headers: [HeaderField]
    package var body: [UInt8]

    package init(method: String, url: String, path: String, headers: [HeaderField], body: [UInt8]) {
        self.method = method
        self.url = url
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The request as the pool would get it, its credential left out.
    init(_ request: HTTP2Request) {
        self.init(
            method: request.method,
            url: request.url,
            path: URLComponents(string: request.url)?.percentEncodedPath ?? request.url,
            headers: request.headers.filter { $0.name.lowercased() != "authorization" }.map {
                HeaderField($0.name, $0.value)
            },
            body: request.body
        )
    }
}

extension MessageTooBig {
    /// What a send makes of a notification whose payload is over its provider's limit: refused before any attempt.
    package var outcome: DeliveryOutcome { .rejected(.messageTooBig, reason: description) }
}

/// A sender that can tell, without sending, the request a notification would go upstream as.
package protocol PreviewingSender: PushSender {
    /// The request `push` would go upstream as if it were sent at `now`, or why it would not go at all (a payload
    /// over the provider's limit, ``MessageTooBig/outcome``). Pure: nothing is sent, no credential is asked for.
    ///
    /// Expo takes up to 100 messages per request and a send joins those of one delivery; the preview's body is the
    /// array holding this notification's message alone.
    func preview(_ push: ResolvedPush, now: Date) -> Result<UpstreamPreview, MessageTooBig>
}

extension ProviderSender: PreviewingSender {
    package func preview(_ push: ResolvedPush, now: Date) -> Result<UpstreamPreview, MessageTooBig> {
        let message: Upstream.Message
        do {
            message = try upstream.message(for: push, now: now)
        } catch {
            return .failure(error)
        }
        let (_, request) = upstream.request(for: [message][...], token: nil)
        return .success(UpstreamPreview(request))
    }
}
