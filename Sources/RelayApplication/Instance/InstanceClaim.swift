package import Foundation
package import Logging
package import RelayCore
package import RelayStore
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// This process's lease on its instance id (`[audit] instance`), which names its audit chain and holds its delivery
/// journal entries (``InstanceLease``).
///
/// ``take(instance:store:clock:logger:lease:)`` takes it at start, before anything is written, and fails with
/// ``InstanceInUse`` while another live process holds it; as a service, ``run()`` renews it every third of its
/// lifetime until shutdown and then gives it back. List it before every other service: the service group stops them
/// in reverse order, so the lease is given back only after the last commit.
///
/// A lease that has not run out is taken over when its holder is certainly dead: the same host name and process id
/// as this process (a container restarted: its relay is process 1 again), or the same host and a process id that no
/// longer exists.
package final class InstanceClaim: Service, Sendable, CustomStringConvertible {
    package var description: String { "InstanceClaim" }

    package let instance: String
    let token: String
    let store: any PushStore
    let clock: RelayClock
    let logger: Logger
    let lease: Duration

    private init(
        instance: String, token: String, store: any PushStore, clock: RelayClock, logger: Logger, lease: Duration
    ) {
        self.instance = instance
        self.token = token
        self.store = store
        self.clock = clock
        self.logger = logger
        self.lease = lease
    }

    /// Takes the lease on `instance`.
    ///
    /// - Throws: ``InstanceInUse`` naming the holder while another live process holds it; the store's error.
    package static func take(
        instance: String,
        store: any PushStore,
        clock: RelayClock = .system,
        logger: Logger,
        lease: Duration = .seconds(60),
        holder: String = InstanceClaim.thisProcess
    ) async throws -> InstanceClaim {
        let now = clock.date
        let mine = InstanceLease(
            instance: instance, token: UUID().uuidString.lowercased(), holder: holder, startedAt: now,
            leaseUntil: now.addingTimeInterval(JournalSettings.seconds(lease)))
        var current = try await store.claimInstance(mine, now: now)
        if current.token != mine.token, Self.isDead(current.holder, seenFrom: holder) {
            logger.notice(
                "Taking over the instance id from a process of this host that is gone",
                metadata: ["audit.instance": "\(instance)", "holder": "\(current.holder)"])
            // Claimed as at the end of its lease: taken unless its holder renewed it meanwhile.
            current = try await store.claimInstance(mine, now: current.leaseUntil)
        }
        guard current.token == mine.token else { throw InstanceInUse(current) }
        return InstanceClaim(
            instance: instance, token: mine.token, store: store, clock: clock, logger: logger, lease: lease)
    }

    package func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown { try await self.clock.sleep(for: self.lease / 3) }
            } catch {
                break
            }
            await renew()
        }
        // In a task of its own: a service group that is cancelled (the listener failed) cancels this task too, and
        // the lease would not be given back.
        await Task { await self.release() }.value
    }

    /// Extends the lease; logs when it is lost (another process took it after this one stalled for a whole lease).
    package func renew() async {
        do {
            let until = clock.date.addingTimeInterval(JournalSettings.seconds(lease))
            if try await !store.renewInstance(instance, token: token, until: until) {
                logger.critical(
                    "Another process took this instance's id after its lease ran out: two relays now write one audit chain",
                    metadata: ["audit.instance": "\(instance)"])
            }
        } catch {
            logger.warning(
                "The instance's lease could not be renewed",
                metadata: ["audit.instance": "\(instance)", "error": "\(error)"])
        }
    }

    /// Gives the lease back, so that a new process with the same id starts at once.
    package func release() async {
        do {
            try await store.releaseInstance(instance, token: token)
        } catch {
            logger.warning(
                "The instance's lease could not be given back; it runs out on its own",
                metadata: ["audit.instance": "\(instance)", "error": "\(error)"])
        }
    }

    /// This process as a lease names it: `<host name> pid <process id>`.
    package static var thisProcess: String { "\(RelayConfiguration.Audit.hostName) pid \(getpid())" }

    /// Whether the holder named `holder` is certainly gone, seen from `me` (both `<host> pid <pid>`).
    static func isDead(_ holder: String, seenFrom me: String) -> Bool {
        guard let theirs = parse(holder), let mine = parse(me), theirs.host == mine.host else { return false }
        if theirs.pid == mine.pid { return true }
        return kill(theirs.pid, 0) != 0 && errno == ESRCH
    }

    private static func parse(_ holder: String) -> (host: String, pid: pid_t)? {
        guard let range = holder.range(of: " pid ", options: .backwards),
            let pid = pid_t(holder[range.upperBound...])
        else { return nil }
        return (String(holder[..<range.lowerBound]), pid)
    }
}

/// Another live process holds this instance id.
package struct InstanceInUse: Error, CustomStringConvertible {
    package let holder: InstanceLease

    package init(_ holder: InstanceLease) {
        self.holder = holder
    }

    package var description: String {
        let started = ISO8601DateFormatter().string(from: holder.startedAt)
        let until = ISO8601DateFormatter().string(from: holder.leaseUntil)
        return """
            the instance id "\(holder.instance)" is in use by \(holder.holder), started \(started) (its lease runs \
            until \(until)): two live relays must not share an id, which names the audit chain each writes. Give \
            this one its own ([audit] instance, or PUSHRELAY_AUDIT_INSTANCE), or "auto" for one made from the host \
            name and a suffix kept beside the data
            """
    }
}
