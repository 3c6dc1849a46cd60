import Foundation
package import Logging
import RelayCore
package import RelayProviders
import RelayStore
import ServiceLifecycle

/// Periodic upkeep: writes the audit records of refusals without a valid key tallied in the minutes that ended
/// (``AnonymousRefusals``), records which keys were used and prunes expired receipts; at start and then once a day,
/// prunes this instance's audit chains to `[audit] retention_days`.
///
/// Time is the relay's clock (``Relay/clock``): what has expired is judged by its date, and the service sleeps on it
/// between rounds, so a test on a manual clock runs a round by advancing the clock by `interval`.
package struct MaintenanceService: Service, CustomStringConvertible {
    package var description: String { "MaintenanceService" }

    let relay: Relay
    let interval: Duration
    let auditRetention: AuditRetention?
    let auditRetentionInterval: Duration
    let logger: Logger

    package init(
        relay: Relay,
        interval: Duration = .seconds(60),
        auditRetention: AuditRetention? = nil,
        auditRetentionInterval: Duration = .seconds(86_400),
        logger: Logger
    ) {
        self.relay = relay
        self.interval = interval
        self.auditRetention = auditRetention
        self.auditRetentionInterval = auditRetentionInterval
        self.logger = logger
    }

    package func run() async throws {
        let clock = relay.clock
        var lastAuditPruning: RelayClock.Instant?
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                await relay.flushAnonymousRefusals()
                try await relay.authenticator.flushUsage()
                let pruned = try await relay.store.pruneReceipts(now: clock.date)
                if pruned > 0 { logger.debug("Pruned expired receipts", metadata: ["receipts": "\(pruned)"]) }
            } catch {
                logger.warning("Maintenance failed", metadata: ["error": "\(error)"])
            }
            if let auditRetention, lastAuditPruning.map({ clock.now - $0 >= auditRetentionInterval }) ?? true {
                lastAuditPruning = clock.now
                await pruneAudit(auditRetention)
            }
            do {
                try await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
            } catch {
                break
            }
        }
        try? await relay.authenticator.flushUsage()
    }

    /// Prunes old audit records and records each pruning in the relay's own chain, through the commit queue (the
    /// queue owns that chain's head).
    func pruneAudit(_ retention: AuditRetention) async {
        do {
            let now = relay.clock.date
            let plans = try await retention.run(now: now)
            guard !plans.isEmpty else { return }
            let days = Int((retention.retention / 86_400).rounded())
            let entries = plans.map { AuditRetention.entry(for: $0, actor: "relay", retentionDays: days, time: now) }
            try await relay.commits.submit(StoreBatch(), audit: entries)
            logger.debug(
                "Pruned old audit records",
                metadata: ["audit.records": "\(plans.reduce(0) { $0 + $1.records })", "audit.chains": "\(plans.count)"]
            )
        } catch {
            logger.warning("Audit log pruning failed", metadata: ["error": "\(error)"])
        }
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

/// Writes the last tallies of refusals without a valid key (``AnonymousRefusals``) on shutdown, while the commit queue
/// still runs: it is listed just after the commit queue, so it stops just before it. The rounds before are the
/// maintenance service's.
package struct AnonymousRefusalsService: Service, CustomStringConvertible {
    package var description: String { "AnonymousRefusalsService" }

    let relay: Relay

    package init(relay: Relay) {
        self.relay = relay
    }

    package func run() async throws {
        try? await gracefulShutdown()
        await relay.flushAnonymousRefusals(all: true)
    }
}
