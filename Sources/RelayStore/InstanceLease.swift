package import Foundation

/// Who runs as an instance (`[audit] instance`): the id names the instance's audit chain and holds its delivery
/// journal entries, so two live processes with one id would write one chain (each commit of one colliding with the
/// other's) and renew each other's journal. The store keeps one lease per id: a process takes it at start, renews
/// it while it runs, gives it back when it stops, and another may take it once it has run out (the holder died).
package struct InstanceLease: Sendable, Equatable {
    package var instance: String
    /// One run of one process: only it renews and gives back the lease (random, made at start).
    package var token: String
    /// Who holds it, for the message another process gets: its host name and process id.
    package var holder: String
    package var startedAt: Date
    package var leaseUntil: Date

    package init(instance: String, token: String, holder: String, startedAt: Date, leaseUntil: Date) {
        self.instance = instance
        self.token = token
        self.holder = holder
        self.startedAt = startedAt
        self.leaseUntil = leaseUntil
    }
}
