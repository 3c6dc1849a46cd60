package import Foundation
package import Logging
package import RelayCore
package import RelayHTTP2

/// A provider's own parts of a sender, which ``ProviderSender`` plugs into its one send-and-classify path: how a
/// notification becomes a message, which endpoint and credential a request goes out with, and what an answer means
/// for each message it carried.
package protocol ProviderUpstream: Sendable {
    /// One notification as the provider takes it (``APNsRequest``, ``FCMRequest``, ``ExpoMessage``).
    associatedtype Message: Sendable

    static var provider: Provider { get }

    /// The most messages one upstream request carries: 1 for APNs and FCM (``SingleMessageUpstream``), 100 for Expo.
    static var maxMessagesPerRequest: Int { get }

    /// Whether a delivered message still has a receipt to come (Expo: a ticket `ok` is not yet the outcome).
    static var deliveryAwaitsReceipt: Bool { get }

    /// The credential every request carries, renewed when the upstream refuses it as expired; `nil` when there is
    /// none to renew.
    var credential: (any TokenProvider)? { get }

    /// The settings its messages are built with (the app's APNs topic and environment, FCM project, critical
    /// channel): no credential, no endpoint.
    var payload: PayloadSettings { get }

    /// Builds the message for one notification; it is built once and sent as it is by every attempt.
    ///
    /// - Parameter now: the current time, for expirations given as a time to live.
    /// - Throws: ``MessageTooBig`` when its payload is over the provider's limit; it is then never sent.
    func message(for push: ResolvedPush, now: Date) throws(MessageTooBig) -> Message

    /// Builds the message for `push` as ``message(for:now:)`` does, given the push before it in the same send and the
    /// message built for it: an upstream whose body depends on the notification's content alone (APNs) reuses that
    /// body when both pushes come from the same message. By default, ``message(for:now:)``.
    func message(
        for push: ResolvedPush,
        now: Date,
        following previous: (push: ResolvedPush, message: Message)?
    ) throws(MessageTooBig) -> Message

    /// The endpoint `message` goes to; the messages of one request all go to the same one.
    func endpoint(for message: Message) -> UpstreamEndpoint

    /// The request that carries `messages` (never empty, at most ``maxMessagesPerRequest``) with the credential's
    /// `token`, and the endpoint it goes to.
    func request(for messages: ArraySlice<Message>, token: String?) -> (UpstreamEndpoint, HTTP2Request)

    /// What the answer to that request means for each of `messages`: one result per message, in order.
    func classify(_ response: HTTP2Response, for messages: ArraySlice<Message>) -> [AttemptResult]

    /// What it means for a message that the credential could not be had; by default what a failure without an
    /// answer means (``AttemptResult/init(failure:)``).
    func credentialFailure(_ error: any Error) -> AttemptResult

    /// Logs a message's final report; by default nothing.
    func log(_ report: DeliveryReport, of message: Message, to logger: Logger)
}

extension ProviderUpstream {
    package static var deliveryAwaitsReceipt: Bool { false }

    package func message(
        for push: ResolvedPush,
        now: Date,
        following previous: (push: ResolvedPush, message: Message)?
    ) throws(MessageTooBig) -> Message {
        try message(for: push, now: now)
    }

    package func credentialFailure(_ error: any Error) -> AttemptResult {
        AttemptResult(failure: error)
    }

    package func log(_ report: DeliveryReport, of message: Message, to logger: Logger) {}
}

/// An upstream that takes one notification per request (APNs, FCM). Its sender gives each push attempts of its own,
/// so that each outcome is known as soon as it arrives, and the delivery job sends such pushes one by one.
package protocol SingleMessageUpstream: ProviderUpstream {
    /// The request that carries `message` with the credential's `token`, and the endpoint it goes to.
    func request(for message: Message, token: String?) -> (UpstreamEndpoint, HTTP2Request)

    /// What the answer to that request means for `message`.
    func classify(_ response: HTTP2Response, for message: Message) -> AttemptResult
}

extension SingleMessageUpstream {
    package static var maxMessagesPerRequest: Int { 1 }

    package func request(for messages: ArraySlice<Message>, token: String?) -> (UpstreamEndpoint, HTTP2Request) {
        // The sender never asks for a request without a message, nor, here, with more than one.
        request(for: messages[messages.startIndex], token: token)
    }

    package func classify(_ response: HTTP2Response, for messages: ArraySlice<Message>) -> [AttemptResult] {
        messages.map { classify(response, for: $0) }
    }
}
