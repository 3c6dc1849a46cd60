import Testing

@testable import RelayCore
@testable import RelayHTTP2
@testable import RelayProviders

/// What each failure without an answer, and each kind of answer, means for the retry loop: whether the message goes
/// again, what it tells the upstream's circuit breaker, and the cause it is counted under.
@Suite struct AttemptResultTests {
    /// Whether a verdict retries.
    static func retries(_ verdict: UpstreamVerdict) -> Bool {
        if case .retry = verdict { true } else { false }
    }

    @Test(
        arguments: [
            // An outage, seen from the transport: retried, and a failure of the upstream.
            (HTTP2Error.Kind.connectFailed, true, CircuitBreaker.Signal.failure, RetryCause.connectFailed),
            (.timeout, true, .failure, .timeout),
            (.streamReset, true, .failure, .streamReset),
            (.connectionLost, true, .failure, .connectionLost),
            (.noResponse, true, .failure, .noResponse),
            // The relay's own pool had no room: retried, but it says nothing about the upstream.
            (.overloaded, true, .neutral, .overloaded),
            // Final: the relay stopping, the caller gone, or the operator's set-up.
            (.shuttingDown, false, .neutral, .noResponse),
            (.cancelled, false, .neutral, .noResponse),
            (.tls, false, .neutral, .noResponse),
            (.notHTTP2, false, .neutral, .noResponse),
        ] as [(HTTP2Error.Kind, Bool, CircuitBreaker.Signal, RetryCause)])
    func aFailureWithoutAnAnswer(
        _ kind: HTTP2Error.Kind, _ retried: Bool, _ signal: CircuitBreaker.Signal, _ cause: RetryCause
    ) {
        let result = AttemptResult(failure: HTTP2Error(kind))
        #expect(Self.retries(result.verdict) == retried)
        #expect(result.signal == signal)
        if retried { #expect(result.retryCause == cause) }
    }

    @Test(
        arguments: [
            (503, "ServiceUnavailable", CircuitBreaker.Signal.failure, RetryCause.serverError),
            (500, "InternalServerError", .failure, .serverError),
            (503, "Shutdown", .failure, .serverError),
            (429, "TooManyRequests", .neutral, .throttled),
            (400, "IdleTimeout", .success, .badConnection),
            (403, "ExpiredProviderToken", .success, .credential),
        ] as [(Int, String, CircuitBreaker.Signal, RetryCause)])
    func anAPNsAnswerThatGoesAgain(
        _ status: Int, _ reason: String, _ signal: CircuitBreaker.Signal, _ cause: RetryCause
    ) {
        let verdict = APNsClassifier.classify(status: status, reason: reason, apnsID: nil)
        let result = AttemptResult(verdict: verdict, status: status, reason: reason)
        #expect(result.signal == signal)
        #expect(result.retryCause == cause)
    }

    @Test func anAnswerShowsTheUpstreamIsUpWhateverItSaysOfTheMessage() {
        for (status, reason) in [(200, nil), (410, "Unregistered"), (400, "BadDeviceToken")] as [(Int, String?)] {
            let verdict = APNsClassifier.classify(status: status, reason: reason, apnsID: nil)
            #expect(AttemptResult(verdict: verdict, status: status, reason: reason).signal == .success)
        }
    }

    @Test func anExpoTicketErrorThatGoesAgainIsTheProvidersError() {
        let verdict = ExpoClassifier.classifyTicket(status: "error", id: nil, error: "ProviderError", message: nil)
        let result = AttemptResult(verdict: verdict, status: 200, reason: "ProviderError")
        #expect(result.signal == .success)
        #expect(result.retryCause == .providerError)
        let throttled = ExpoClassifier.classifyTicket(
            status: "error", id: nil, error: "MessageRateExceeded", message: nil)
        #expect(AttemptResult(verdict: throttled, status: 200).retryCause == .throttled)
    }

    @Test func anAttemptIsASuccessWhenAnyMessageWasAnsweredAndAFailureWhenOnlyFailuresCame() {
        let answered = AttemptResult(verdict: .final(.delivered(providerMessageID: nil)), status: 200)
        let lost = AttemptResult(failure: HTTP2Error(.connectionLost))
        let neutral = AttemptResult(failure: HTTP2Error(.overloaded))
        #expect(RetryLoop.signal(of: [lost, answered]) == .success)
        #expect(RetryLoop.signal(of: [neutral, lost]) == .failure)
        #expect(RetryLoop.signal(of: [neutral]) == .neutral)
    }
}
