/// Counters of a running ``HTTP2TestServer``; ``HTTP2TestServer/statistics`` returns a snapshot.
package struct HTTP2TestServerStatistics: Sendable, Equatable {
    /// TCP connections accepted since the server started.
    package var connectionsAccepted: Int = 0
    /// TCP connections currently open.
    package var connectionsOpen: Int = 0
    /// Request streams the client opened since the server started.
    package var streamsTotal: Int = 0
    /// Request streams currently open (from the request's HEADERS until the stream closes either way).
    package var streamsInFlight: Int = 0
    /// The most streams that were open at the same time on any one connection, since the server started or
    /// ``HTTP2TestServer/resetMaxConcurrentStreamsSeen()`` was last called.
    package var maxConcurrentStreamsSeen: Int = 0
    /// The most streams that were open at the same time across all connections, since the server started or
    /// ``HTTP2TestServer/resetMaxConcurrentStreamsSeen()`` was last called.
    package var maxConcurrentStreamsTotal: Int = 0
    /// `GOAWAY` frames the server sent (scripted actions, ``HTTP2TestServer/Configuration/goAwayEveryStreams`` and
    /// ``HTTP2TestServer/goAwayAllConnections()``).
    package var goAwaysSent: Int = 0
    /// `RST_STREAM` frames the server sent on behalf of ``HTTP2TestAction/resetStream(code:)``,
    /// ``HTTP2TestAction/goAway(thenRespond:)`` without a response, and after early answers
    /// (``HTTP2TestServer/Configuration/answerBeforeBody``).
    package var resetsSent: Int = 0
    /// `RST_STREAM` frames the clients sent, whatever the stream's state.
    package var resetsReceived: Int = 0
    /// The part of ``resetsReceived`` that arrived on streams whose complete response (`END_STREAM`) the server had
    /// already sent, as libcurl 7.88.1 sends them for many answered streams.
    package var resetsReceivedAfterResponse: Int = 0
    /// `PING` frames the clients sent, not counting `PING` acknowledgements.
    package var pingsReceived: Int = 0
    /// `SETTINGS` frames sent on open connections by ``HTTP2TestServer/setMaxConcurrentStreams(_:)``, one per
    /// connection (the first `SETTINGS` of each connection is not counted).
    package var settingsChangesSent: Int = 0
    /// Connections stalled by ``HTTP2TestServer/stallAllConnections()`` or ``HTTP2TestAction/stallConnection``, open
    /// or closed since.
    package var connectionsStalled: Int = 0

    package init(
        connectionsAccepted: Int = 0,
        connectionsOpen: Int = 0,
        streamsTotal: Int = 0,
        streamsInFlight: Int = 0,
        maxConcurrentStreamsSeen: Int = 0,
        maxConcurrentStreamsTotal: Int = 0,
        goAwaysSent: Int = 0,
        resetsSent: Int = 0,
        resetsReceived: Int = 0,
        resetsReceivedAfterResponse: Int = 0,
        pingsReceived: Int = 0,
        settingsChangesSent: Int = 0,
        connectionsStalled: Int = 0
    ) {
        self.connectionsAccepted = connectionsAccepted
        self.connectionsOpen = connectionsOpen
        self.streamsTotal = streamsTotal
        self.streamsInFlight = streamsInFlight
        self.maxConcurrentStreamsSeen = maxConcurrentStreamsSeen
        self.maxConcurrentStreamsTotal = maxConcurrentStreamsTotal
        self.goAwaysSent = goAwaysSent
        self.resetsSent = resetsSent
        self.resetsReceived = resetsReceived
        self.resetsReceivedAfterResponse = resetsReceivedAfterResponse
        self.pingsReceived = pingsReceived
        self.settingsChangesSent = settingsChangesSent
        self.connectionsStalled = connectionsStalled
    }
}
