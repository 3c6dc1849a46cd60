import HummingbirdCore
import Logging
import NIOCore

/// A listener channel (`HTTP1Channel`, ``RelayTLSChannel``) behind the cap on open connections: a connection accepted
/// while ``OpenConnections/limit`` are open gets a ``ConnectionRefusalHandler`` instead of the base channel's pipeline
/// and is never handed to the responder; the others are set up and served by the base channel.
///
/// The decision is made in `setup`, which NIO runs before the connection is registered with its event loop: a refused
/// connection must still be set up successfully (with the refusal handler), because NIO neither registers nor closes
/// one whose setup failed.
struct AdmittingChannel<Base: ServerChildChannel>: ServerChildChannel {
    struct Value: ServerChildChannelValue {
        /// The base channel's value; `nil` for a refused connection.
        let admitted: Base.Value?
        let channel: any Channel
    }

    let base: Base
    let connections: OpenConnections
    /// What a refused connection is told (see ``ConnectionRefusalHandler``).
    let refusal: ConnectionRefusalHandler.Answer

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard self.connections.admit() else {
            let refusal = self.refusal
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ConnectionRefusalHandler(answer: refusal))
                return Value(admitted: nil, channel: channel)
            }
        }
        let connections = self.connections
        channel.closeFuture.whenComplete { _ in connections.closed() }
        let setUp = self.base.setup(channel: channel, logger: logger)
        // NIO leaves a connection whose setup failed unregistered and open: close it, which also releases its place.
        setUp.whenFailure { _ in channel.close(promise: nil) }
        return setUp.map { Value(admitted: $0, channel: channel) }
    }

    func handle(value: Value, logger: Logger) async {
        guard let admitted = value.admitted else { return }
        await self.base.handle(value: admitted, logger: logger)
    }
}
