import Foundation
import RelayStore
package import Logging
package import RelayProviders
package import ServiceLifecycle

/// Periodic upkeep: records which keys were used and prunes expired receipts.
package struct MaintenanceService: Service, CustomStringConvertible {
    package var description: String { "MaintenanceService" }

    let relay: Relay
    let interval: Duration
    let logger: Logger

    package init(relay: Relay, interval: Duration = .seconds(60), logger: Logger) {
        self.relay = relay
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await relay.authenticator.flushUsage()
                let pruned = try await relay.store.pruneReceipts(now: Date())
                if pruned > 0 { logger.debug("Pruned expired receipts", metadata: ["receipts": "\(pruned)"]) }
            } catch {
                logger.warning("Maintenance failed", metadata: ["error": "\(error)"])
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                break
            }
        }
        try? await relay.authenticator.flushUsage()
    }
}

/// Runs the Expo receipt poller for the relay's lifetime.
package struct ExpoReceiptService: Service, CustomStringConvertible {
    package var description: String { "ExpoReceiptService" }

    let poller: ExpoReceiptPoller

    package init(poller: ExpoReceiptPoller) {
        self.poller = poller
    }

    package func run() async throws {
        await cancelWhenGracefulShutdown { await poller.run() }
    }
}
