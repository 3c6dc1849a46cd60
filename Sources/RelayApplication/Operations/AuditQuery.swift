package import RelayCore
package import RelayStore

/// Streams the audit records matching a filter from the store, rendered for review, a page at a time: memory does not
/// grow with the number of records.
package struct AuditQuery: Sendable {
    package let store: any PushStore
    package let filter: AuditFilter
    package let format: AuditFormat
    /// The most records written; `nil` for all.
    package let limit: Int?
    let pageSize: Int

    package init(
        store: any PushStore, filter: AuditFilter, format: AuditFormat, limit: Int? = nil, pageSize: Int = 1_000
    ) {
        self.store = store
        self.filter = filter
        self.format = format
        self.limit = limit
        self.pageSize = max(1, pageSize)
    }

    /// Writes the header line (CSV and table) and one line per record, in stored order, through `write`.
    ///
    /// - Returns: How many records were written.
    @discardableResult
    package func run(write: (String) throws -> Void) async throws -> Int {
        var names: [String: String] = [:]
        if format == .table {
            for tenant in try await store.tenants() { names[tenant.id] = tenant.name }
        }
        let renderer = AuditRenderer(format: format, tenantNames: names)
        if let header = renderer.headerLine { try write(header) }
        var written = 0
        var position: Int64 = 0
        while limit.map({ written < $0 }) ?? true {
            let wanted = min(pageSize, limit.map { $0 - written } ?? pageSize)
            let page = try await store.auditRecords(matching: filter, after: position, limit: wanted)
            for stored in page { try write(renderer.line(for: stored.record)) }
            written += page.count
            guard let last = page.last, page.count == wanted else { break }
            position = last.position
        }
        return written
    }
}
