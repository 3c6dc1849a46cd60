package import RelayCore

/// An audit record with its place in the store: the order records were written in, whatever their `seq` says.
/// Verification walks this order, so that a record moved elsewhere is named as reordered.
package struct StoredAuditRecord: Sendable, Equatable {
    /// Increases with every record written (across chains); the cursor of paginated queries.
    package var position: Int64
    package var record: AuditRecord

    package init(position: Int64, record: AuditRecord) {
        self.position = position
        self.record = record
    }
}
