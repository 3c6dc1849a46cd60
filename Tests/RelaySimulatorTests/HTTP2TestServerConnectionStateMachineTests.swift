import Testing

@testable import RelaySimulator

@Suite struct HTTP2TestServerConnectionStateMachineTests {
    typealias Machine = HTTP2TestServer.ConnectionStateMachine

    @Test func activeConnectionNeverSendsGoAwayByItself() {
        var machine = Machine(goAwayEveryStreams: nil)
        for streamID in stride(from: 1, through: 99, by: 2) {
            #expect(machine.streamOpened(streamID: streamID) == 1)
            #expect(machine.streamAccepted(streamID: streamID) == .none)
            #expect(machine.streamClosed() == .none)
        }
        #expect(machine.highestStreamID == 99)
        #expect(machine.lastStreamID == nil)
    }

    @Test func goAwayEveryStreamsNamesTheNthStreamAndClosesAfterTheOpenOnes() {
        var machine = Machine(goAwayEveryStreams: 3)
        _ = machine.streamOpened(streamID: 1)
        #expect(machine.streamAccepted(streamID: 1) == .none)
        _ = machine.streamOpened(streamID: 3)
        #expect(machine.streamAccepted(streamID: 3) == .none)
        #expect(machine.streamClosed() == .none)
        #expect(machine.streamOpened(streamID: 5) == 2)
        #expect(machine.streamAccepted(streamID: 5) == .sendGoAway(lastStreamID: 5, thenClose: false))
        #expect(machine.lastStreamID == 5)
        #expect(machine.streamClosed() == .none)
        #expect(machine.streamClosed() == .close)
    }

    @Test func goAwayOnAnIdleConnectionClosesRightAfterTheFrame() {
        var machine = Machine(goAwayEveryStreams: nil)
        _ = machine.streamOpened(streamID: 7)
        _ = machine.streamClosed()
        #expect(machine.goAwayRequested(lastStreamID: nil) == .sendGoAway(lastStreamID: 7, thenClose: true))
        #expect(machine.goAwayRequested(lastStreamID: nil) == .none)
    }

    @Test func goAwayBeforeAnyStreamNamesStreamZero() {
        var machine = Machine(goAwayEveryStreams: nil)
        #expect(machine.goAwayRequested(lastStreamID: nil) == .sendGoAway(lastStreamID: 0, thenClose: true))
    }

    @Test func aLaterGoAwayMayOnlyLowerTheLastStreamID() {
        var machine = Machine(goAwayEveryStreams: nil)
        for streamID in [1, 3, 5] {
            _ = machine.streamOpened(streamID: streamID)
        }
        #expect(machine.goAwayRequested(lastStreamID: 3) == .sendGoAway(lastStreamID: 3, thenClose: false))
        #expect(machine.goAwayRequested(lastStreamID: nil) == .none)  // highest is 5: may not raise it
        #expect(machine.goAwayRequested(lastStreamID: 3) == .none)
        #expect(machine.goAwayRequested(lastStreamID: 1) == .sendGoAway(lastStreamID: 1, thenClose: false))
        #expect(machine.lastStreamID == 1)
        #expect(machine.streamClosed() == .none)
        #expect(machine.streamClosed() == .none)
        #expect(machine.streamClosed() == .close)
    }

    @Test func aClosedConnectionDecidesNothing() {
        var machine = Machine(goAwayEveryStreams: 1)
        _ = machine.streamOpened(streamID: 1)
        machine.connectionClosed()
        #expect(machine.streamAccepted(streamID: 1) == .none)
        #expect(machine.goAwayRequested(lastStreamID: nil) == .none)
        #expect(machine.streamClosed() == .none)
    }
}
