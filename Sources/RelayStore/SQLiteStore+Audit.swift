import Foundation
import GRDB
package import RelayCore

extension SQLiteStore {
    private static let auditColumns = """
        position, chain, seq, time_ms, event, tenant_id, key_id, request_id, client, provider, token_fingerprint, \
        critical, outcome, upstream_status, upstream_reason, attempts, latency_ms, actor, before_json, after_json, \
        detail, link, app
        """

    /// Appends audit records inside the caller's transaction, in order.
    static func append(_ records: [AuditRecord], db: Database) throws {
        guard !records.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO audit_records (chain, seq, time_ms, event, tenant_id, key_id, request_id, client,
                    provider, token_fingerprint, critical, outcome, upstream_status, upstream_reason, attempts,
                    latency_ms, actor, before_json, after_json, detail, link, app)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        // One audit record per notification: bound through SQLite's C API (`SQLiteRowWriter` says why).
        var row = SQLiteRowWriter(statement, in: db)
        for record in records {
            try Self.bind(record, to: &row)
            try row.step()
        }
    }

    /// Binds a record's row in the order of `append`'s statement. The entry's fields are read through `record.entry`,
    /// not the record's dynamic members: each of those is a key path applied at run time, which copied the whole entry
    /// per field (`relay-bench relay`, batched phase: about 4 % of the relay's CPU).
    private static func bind(_ record: borrowing AuditRecord, to row: inout SQLiteRowWriter) throws {
        try row.bind(record.chain)
        try row.bind(record.seq)
        try row.bind(record.entry.timeMillis)
        try row.bind(record.entry.event.rawValue)
        try row.bind(record.entry.tenantID)
        try row.bind(record.entry.keyID)
        try row.bind(record.entry.requestID)
        try row.bind(record.entry.client)
        try row.bind(record.entry.provider)
        try row.bind(record.entry.tokenFingerprint)
        try row.bind(record.entry.critical)
        try row.bind(record.entry.outcome)
        try row.bind(record.entry.upstreamStatus)
        try row.bind(record.entry.upstreamReason)
        try row.bind(record.entry.attempts)
        try row.bind(record.entry.latencyMillis)
        try row.bind(record.entry.actor)
        try row.bind(record.entry.before.map(AuditJSONText.encode))
        try row.bind(record.entry.after.map(AuditJSONText.encode))
        try row.bind(record.entry.detail)
        try row.bind(bytes: record.link)
        try row.bind(record.entry.app)
    }

    /// Stores checkpoints inside the caller's transaction; the same checkpoint twice is kept once.
    static func insert(_ checkpoints: [AuditCheckpoint], db: Database) throws {
        guard !checkpoints.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT OR IGNORE INTO audit_checkpoints (chain, seq, link, time_ms, key_id, signature)
                VALUES (?, ?, ?, ?, ?, ?)
                """
        )
        for checkpoint in checkpoints {
            try statement.execute(arguments: [
                checkpoint.chain, checkpoint.seq, Data(checkpoint.link), checkpoint.timeMillis, checkpoint.keyID,
                Data(checkpoint.signature),
            ])
        }
    }

    package func auditHead(chain: String) async throws -> AuditAnchor? {
        try await writer.read { db in
            if let row = try Row.fetchOne(
                db,
                sql: "SELECT seq, link FROM audit_records WHERE chain = ? ORDER BY seq DESC LIMIT 1",
                arguments: [chain]
            ) {
                return AuditAnchor(chain: chain, seq: try row.decode(forColumn: "seq"), link: try row.bytes("link"))
            }
            return try Self.anchor(chain: chain, db: db)
        }
    }

    package func auditChains() async throws -> [String] {
        try await writer.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT chain FROM (SELECT DISTINCT chain FROM audit_records UNION SELECT chain FROM audit_anchors)
                    ORDER BY chain
                    """
            )
        }
    }

    package func auditAnchor(chain: String) async throws -> AuditAnchor? {
        try await writer.read { db in try Self.anchor(chain: chain, db: db) }
    }

    private static func anchor(chain: String, db: Database) throws -> AuditAnchor? {
        try Row.fetchOne(db, sql: "SELECT seq, link FROM audit_anchors WHERE chain = ?", arguments: [chain]).map {
            AuditAnchor(chain: chain, seq: try $0.decode(forColumn: "seq"), link: try $0.bytes("link"))
        }
    }

    package func auditRecords(chain: String, after position: Int64, limit: Int) async throws -> [StoredAuditRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.auditColumns) FROM audit_records WHERE chain = ? AND position > ?
                    ORDER BY position LIMIT ?
                    """,
                arguments: [chain, position, limit]
            ).map(StoredAuditRecord.init(row:))
        }
    }

    package func auditRecords(matching filter: AuditFilter, after position: Int64, limit: Int) async throws
        -> [StoredAuditRecord]
    {
        var conditions = ["position > ?"]
        var arguments: StatementArguments = [position]
        if let tenantID = filter.tenantID {
            conditions.append("tenant_id = ?")
            arguments += [tenantID]
        }
        if let since = filter.sinceMillis {
            conditions.append("time_ms >= ?")
            arguments += [since]
        }
        if let until = filter.untilMillis {
            conditions.append("time_ms < ?")
            arguments += [until]
        }
        if let outcome = filter.outcome {
            conditions.append("outcome = ?")
            arguments += [outcome]
        }
        if let critical = filter.critical {
            conditions.append("critical = ?")
            arguments += [critical]
        }
        if let event = filter.event {
            conditions.append("event = ?")
            arguments += [event.rawValue]
        }
        arguments += [limit]
        let boundArguments = arguments
        // Only fixed condition texts are joined here; every value is a bound argument.
        let sql = """
            SELECT \(Self.auditColumns) FROM audit_records WHERE \(conditions.joined(separator: " AND "))
            ORDER BY position LIMIT ?
            """
        return try await writer.read { db in
            try Row.fetchAll(db, sql: sql, arguments: boundArguments).map(StoredAuditRecord.init(row:))
        }
    }

    package func auditCheckpoints(chain: String) async throws -> [AuditCheckpoint] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, link, time_ms, key_id, signature FROM audit_checkpoints WHERE chain = ?
                    ORDER BY seq, key_id
                    """,
                arguments: [chain]
            ).map { row in
                AuditCheckpoint(
                    chain: chain,
                    seq: try row.decode(forColumn: "seq"),
                    link: try row.bytes("link"),
                    timeMillis: try row.decode(forColumn: "time_ms"),
                    keyID: try row.decode(forColumn: "key_id"),
                    signature: try row.bytes("signature")
                )
            }
        }
    }

    package func pruneAudit(to anchor: AuditAnchor) async throws -> Int {
        try await writer.write { db in
            try db.execute(
                sql: "DELETE FROM audit_records WHERE chain = ? AND seq <= ?",
                arguments: [anchor.chain, anchor.seq]
            )
            let pruned = db.changesCount
            try db.execute(
                sql: "DELETE FROM audit_checkpoints WHERE chain = ? AND seq < ?",
                arguments: [anchor.chain, anchor.seq]
            )
            try db.execute(
                sql: """
                    INSERT INTO audit_anchors (chain, seq, link) VALUES (?, ?, ?)
                    ON CONFLICT (chain) DO UPDATE SET seq = excluded.seq, link = excluded.link
                    WHERE excluded.seq > audit_anchors.seq
                    """,
                arguments: [anchor.chain, anchor.seq, Data(anchor.link)]
            )
            return pruned
        }
    }
}

extension StoredAuditRecord {
    init(row: Row) throws {
        let position: Int64 = try row.decode(forColumn: "position")
        let eventName: String = try row.decode(forColumn: "event")
        guard let event = AuditEvent(rawValue: eventName) else {
            throw StoreError.unavailable("audit record at position \(position) has an unknown event \"\(eventName)\"")
        }
        let before: String? = try row.decode(forColumn: "before_json")
        let after: String? = try row.decode(forColumn: "after_json")
        let entry = AuditEntry(
            timeMillis: try row.decode(forColumn: "time_ms"),
            event: event,
            tenantID: try row.decode(forColumn: "tenant_id"),
            keyID: try row.decode(forColumn: "key_id"),
            requestID: try row.decode(forColumn: "request_id"),
            client: try row.decode(forColumn: "client"),
            provider: try row.decode(forColumn: "provider"),
            tokenFingerprint: try row.decode(forColumn: "token_fingerprint"),
            critical: try row.decode(forColumn: "critical"),
            outcome: try row.decode(forColumn: "outcome"),
            upstreamStatus: try row.decode(forColumn: "upstream_status"),
            upstreamReason: try row.decode(forColumn: "upstream_reason"),
            attempts: try row.decode(forColumn: "attempts"),
            latencyMillis: try row.decode(forColumn: "latency_ms"),
            actor: try row.decode(forColumn: "actor"),
            before: try before.map(AuditJSONText.decode),
            after: try after.map(AuditJSONText.decode),
            detail: try row.decode(forColumn: "detail"),
            app: try row.decode(forColumn: "app")
        )
        self.init(
            position: position,
            record: AuditRecord(
                chain: try row.decode(forColumn: "chain"),
                seq: try row.decode(forColumn: "seq"),
                entry: entry,
                link: try row.bytes("link")
            )
        )
    }
}

extension Row {
    fileprivate func bytes(_ column: String) throws -> [UInt8] {
        [UInt8](try decode(Data.self, forColumn: column))
    }
}
