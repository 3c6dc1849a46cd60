import Foundation
package import Logging
import Metrics
import RelayCore
import RelayStore
import ServiceLifecycle

/// Keeps the delivery journal moving while the relay runs: every ``JournalSettings/sweepInterval`` of the relay's
/// clock it renews the leases of the journaled notifications this instance is sending, resumes entries whose lease
/// has ended (a dead instance's, or ones this instance stopped renewing after a failed commit), and publishes the
/// journal's gauges: `relay_journal_entries` and `relay_journal_oldest_age_seconds`.
///
/// Resuming at start is not its job: `pushrelay serve` calls ``Relay/resumeJournal(includingOwn:)`` before the
/// listener accepts.
package struct JournalService: Service, CustomStringConvertible {
    package var description: String { "JournalService" }

    let relay: Relay
    let logger: Logger

    package init(relay: Relay, logger: Logger) {
        self.relay = relay
        self.logger = logger
    }

    package func run() async throws {
        let clock = relay.clock
        await Self.publishGauges(relay)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown { try await clock.sleep(for: relay.journal.sweepInterval) }
            } catch {
                break
            }
            await sweep()
        }
    }

    /// One round: renew, resume what others left, publish the gauges.
    package func sweep() async {
        let journal = relay.journal
        do {
            let held = relay.queue.receiptIDsInFlight(journaledOnly: true)
            if !held.isEmpty {
                let until = relay.clock.date.addingTimeInterval(JournalSettings.seconds(journal.lease))
                try await relay.store.renewJournalLeases(receiptIDs: held, instance: journal.instance, until: until)
            }
            try await relay.resumeJournal(includingOwn: false)
        } catch {
            logger.warning("The delivery journal could not be swept", metadata: ["error": "\(error)"])
        }
        await Self.publishGauges(relay)
    }

    /// Reads the journal's size and oldest entry into the gauges.
    package static func publishGauges(_ relay: Relay) async {
        guard let statistics = try? await relay.store.journalStatistics() else { return }
        Gauge(label: "relay_journal_entries").record(statistics.entries)
        let age = statistics.oldest.map { max(0, relay.clock.date.timeIntervalSince($0)) } ?? 0
        Gauge(label: "relay_journal_oldest_age_seconds").record(age)
    }
}
