import Foundation
import PostgresNIO
package import RelayCore
package import RelayStore

extension PostgresStore {
    private static let auditColumnNames = [
        "chain", "seq", "time_ms", "event", "tenant_id", "key_id", "request_id", "client", "provider",
        "token_fingerprint", "critical", "outcome", "upstream_status", "upstream_reason", "attempts", "latency_ms",
        "actor", "before_json", "after_json", "detail", "link", "app",
    ]
    private static let auditColumns = "position, " + auditColumnNames.joined(separator: ", ")
    /// 1,000 records bind 22,000 parameters, well inside PostgreSQL's 65,535.
    private static let auditRowsPerStatement = 1_000

    /// Multi-row inserts, in the batch's order: `position` (an identity column) numbers rows in the order a
    /// statement lists them, and one relay's commits follow each other, so a chain's positions follow its seqs.
    static func auditStatements(_ records: [AuditRecord]) -> [PostgresQuery] {
        let width = auditColumnNames.count
        return stride(from: 0, to: records.count, by: auditRowsPerStatement).map { start in
            let chunk = records[start..<min(start + auditRowsPerStatement, records.count)]
            var binds = PostgresBindings(capacity: chunk.count * width)
            var values: [String] = []
            values.reserveCapacity(chunk.count)
            for record in chunk {
                values.append(PostgresBindings.placeholders(from: binds.count + 1, count: width))
                binds.append(record.chain)
                binds.append(record.seq)
                binds.append(record.timeMillis)
                binds.append(record.event.rawValue)
                binds.append(record.tenantID)
                binds.append(record.keyID)
                binds.append(record.requestID)
                binds.append(record.client)
                binds.append(record.provider)
                binds.append(record.tokenFingerprint)
                binds.append(record.critical)
                binds.append(record.outcome)
                binds.append(record.upstreamStatus)
                binds.append(record.upstreamReason)
                binds.append(record.attempts)
                binds.append(record.latencyMillis)
                binds.append(record.actor)
                binds.append(record.before.map(AuditJSONText.encode))
                binds.append(record.after.map(AuditJSONText.encode))
                binds.append(record.detail)
                binds.append(ByteBuffer(bytes: record.link))
                binds.append(record.app)
            }
            return .assembled(
                """
                INSERT INTO audit_records (\(auditColumnNames.joined(separator: ", ")))
                VALUES \(values.joined(separator: ", "))
                """,
                binds: binds
            )
        }
    }

    /// Checkpoint inserts; the same checkpoint twice is kept once.
    static func checkpointStatements(_ checkpoints: [AuditCheckpoint]) -> [PostgresQuery] {
        let width = 6
        return stride(from: 0, to: checkpoints.count, by: auditRowsPerStatement).map { start in
            let chunk = checkpoints[start..<min(start + auditRowsPerStatement, checkpoints.count)]
            var binds = PostgresBindings(capacity: chunk.count * width)
            var values: [String] = []
            for checkpoint in chunk {
                values.append(PostgresBindings.placeholders(from: binds.count + 1, count: width))
                binds.append(checkpoint.chain)
                binds.append(checkpoint.seq)
                binds.append(ByteBuffer(bytes: checkpoint.link))
                binds.append(checkpoint.timeMillis)
                binds.append(checkpoint.keyID)
                binds.append(ByteBuffer(bytes: checkpoint.signature))
            }
            return .assembled(
                """
                INSERT INTO audit_checkpoints (chain, seq, link, time_ms, key_id, signature)
                VALUES \(values.joined(separator: ", "))
                ON CONFLICT DO NOTHING
                """,
                binds: binds
            )
        }
    }

    package func auditHead(chain: String) async throws -> AuditAnchor? {
        if let row = try await rows(
            "SELECT seq, link FROM audit_records WHERE chain = \(chain) ORDER BY seq DESC LIMIT 1"
        ).first {
            let (seq, link) = try row.decode((Int64, Data).self)
            return AuditAnchor(chain: chain, seq: seq, link: [UInt8](link))
        }
        return try await auditAnchor(chain: chain)
    }

    package func auditChains() async throws -> [String] {
        try await rows(
            """
            SELECT chain FROM (SELECT chain FROM audit_records UNION SELECT chain FROM audit_anchors) AS chains
            ORDER BY chain COLLATE "C"
            """
        ).map { try $0.decode(String.self) }
    }

    package func auditAnchor(chain: String) async throws -> AuditAnchor? {
        try await rows("SELECT seq, link FROM audit_anchors WHERE chain = \(chain)").first.map { row in
            let (seq, link) = try row.decode((Int64, Data).self)
            return AuditAnchor(chain: chain, seq: seq, link: [UInt8](link))
        }
    }

    package func auditRecords(chain: String, after position: Int64, limit: Int) async throws -> [StoredAuditRecord] {
        try await rows(
            """
            SELECT \(unescaped: Self.auditColumns) FROM audit_records
            WHERE chain = \(chain) AND position > \(position)
            ORDER BY position LIMIT \(limit)
            """
        ).map(StoredAuditRecord.init(row:))
    }

    package func auditRecords(matching filter: AuditFilter, after position: Int64, limit: Int) async throws
        -> [StoredAuditRecord]
    {
        var binds = PostgresBindings()
        // Only fixed condition texts with `$n` placeholders are joined here; every value is a bound parameter.
        var conditions: [String] = []
        binds.append(position)
        conditions.append("position > $\(binds.count)")
        if let tenantID = filter.tenantID {
            binds.append(tenantID)
            conditions.append("tenant_id = $\(binds.count)")
        }
        if let since = filter.sinceMillis {
            binds.append(since)
            conditions.append("time_ms >= $\(binds.count)")
        }
        if let until = filter.untilMillis {
            binds.append(until)
            conditions.append("time_ms < $\(binds.count)")
        }
        if let outcome = filter.outcome {
            binds.append(outcome)
            conditions.append("outcome = $\(binds.count)")
        }
        if let critical = filter.critical {
            binds.append(critical)
            conditions.append("critical = $\(binds.count)")
        }
        if let event = filter.event {
            binds.append(event.rawValue)
            conditions.append("event = $\(binds.count)")
        }
        binds.append(limit)
        return try await rows(
            .assembled(
                """
                SELECT \(Self.auditColumns) FROM audit_records WHERE \(conditions.joined(separator: " AND "))
                ORDER BY position LIMIT $\(binds.count)
                """,
                binds: binds
            )
        ).map(StoredAuditRecord.init(row:))
    }

    package func auditCheckpoints(chain: String) async throws -> [AuditCheckpoint] {
        try await rows(
            """
            SELECT seq, link, time_ms, key_id, signature FROM audit_checkpoints WHERE chain = \(chain)
            ORDER BY seq, key_id COLLATE "C"
            """
        ).map { row in
            let (seq, link, timeMillis, keyID, signature) = try row.decode((Int64, Data, Int64, String, Data).self)
            return AuditCheckpoint(
                chain: chain,
                seq: seq,
                link: [UInt8](link),
                timeMillis: timeMillis,
                keyID: keyID,
                signature: [UInt8](signature)
            )
        }
    }

    package func pruneAudit(to anchor: AuditAnchor) async throws -> Int {
        try await transaction { transaction in
            let pruned =
                try await transaction.rows(
                    """
                    WITH deleted AS (
                        DELETE FROM audit_records WHERE chain = \(anchor.chain) AND seq <= \(anchor.seq) RETURNING 1
                    )
                    SELECT count(*) FROM deleted
                    """
                ).first?.decode(Int.self) ?? 0
            try await transaction.execute(
                "DELETE FROM audit_checkpoints WHERE chain = \(anchor.chain) AND seq < \(anchor.seq)"
            )
            try await transaction.execute(
                """
                INSERT INTO audit_anchors (chain, seq, link) VALUES (\(anchor.chain), \(anchor.seq), \(ByteBuffer(bytes: anchor.link)))
                ON CONFLICT (chain) DO UPDATE SET seq = EXCLUDED.seq, link = EXCLUDED.link
                WHERE EXCLUDED.seq > audit_anchors.seq
                """
            )
            return pruned
        }
    }
}

extension StoredAuditRecord {
    init(row: PostgresRow) throws {
        let row = row.makeRandomAccess()
        let position: Int64 = try row.value("position")
        let eventName: String = try row.value("event")
        guard let event = AuditEvent(rawValue: eventName) else {
            throw StoreError.unavailable("audit record at position \(position) has an unknown event \"\(eventName)\"")
        }
        let before: String? = try row.value("before_json")
        let after: String? = try row.value("after_json")
        let entry = AuditEntry(
            timeMillis: try row.value("time_ms"),
            event: event,
            tenantID: try row.value("tenant_id"),
            keyID: try row.value("key_id"),
            requestID: try row.value("request_id"),
            client: try row.value("client"),
            provider: try row.value("provider"),
            tokenFingerprint: try row.value("token_fingerprint"),
            critical: try row.value("critical"),
            outcome: try row.value("outcome"),
            upstreamStatus: try row.value("upstream_status"),
            upstreamReason: try row.value("upstream_reason"),
            attempts: try row.value("attempts"),
            latencyMillis: try row.value("latency_ms"),
            actor: try row.value("actor"),
            before: try before.map(AuditJSONText.decode),
            after: try after.map(AuditJSONText.decode),
            detail: try row.value("detail"),
            app: try row.value("app")
        )
        self.init(
            position: position,
            record: AuditRecord(
                chain: try row.value("chain"),
                seq: try row.value("seq"),
                entry: entry,
                link: [UInt8](try row.value("link", as: Data.self))
            )
        )
    }
}
