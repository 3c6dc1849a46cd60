import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RelayApplication
import RelayCore
import RelayStore

extension AdminAPI {
    static let defaultAuditLimit = 100
    static let maxAuditLimit = 1000

    /// `GET /admin/v1/tenants/{id}/usage?days=30`: the tenant's counters for the last `days` UTC days, today included.
    func usage(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .read)
        return try await withPathTenant(administration, context: context) { tenant in
            var query = AdminQuery(request, allowed: ["days"])
            let days = query.integer(TenantRules.Field.days.rawValue, in: TenantRules.usageDays)
            try query.finish()
            let report = try await administering { try await administration.usage(of: tenant, days: days) }
            return jsonResponse(AdminJSON.usage(report))
        }
    }

    /// `GET /admin/v1/audit?tenant=&since=&until=&outcome=&critical=&event=&limit=&cursor=`: one page of records of
    /// every chain, in stored order, as `{"data": [record…], "nextCursor": "…" | null}`.
    ///
    /// Each record is its JSON Lines rendering (``AuditRenderer``, format `jsonl`): the same object, with the same
    /// field names, as every other place that shows audit records. `nextCursor` is set when more records may follow;
    /// pass it as `cursor` for the next page.
    func audit(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .read)
        var query = AdminQuery(
            request,
            allowed: ["tenant", "since", "until", "outcome", "critical", "event", "limit", "cursor"]
        )
        let tenant = query.string("tenant")
        var filter = AuditFilter(
            since: query.date("since"),
            until: query.date("until"),
            outcome: query.string("outcome"),
            critical: query.bool("critical"),
            event: query.event("event")
        )
        let limit = query.integer("limit", in: 1...Self.maxAuditLimit) ?? Self.defaultAuditLimit
        let cursor = query.string("cursor").map { Self.position(fromCursor: $0) }
        if case .some(nil) = cursor {
            query.fail("cursor", "is not a cursor this relay gave out (use nextCursor as is)")
        }
        if let since = filter.since, let until = filter.until, until < since {
            query.fail("until", "must not be before since")
        }
        try query.finish()
        // A tenant's records are found by its id; a name is resolved first, and anything else is taken as an id
        // (no tenant is ever removed, but records may name one that never existed, e.g. refused requests).
        if let tenant {
            filter.tenantID = try await administering { try await administration.findTenant(tenant) }?.id ?? tenant
        }
        let after = cursor.flatMap { $0 } ?? 0
        let page = try await storeCall {
            try await relay.store.auditRecords(matching: filter, after: after, limit: limit + 1)
        }
        let shown = page.prefix(limit)
        let next = page.count > limit ? shown.last.map { Self.cursor(fromPosition: $0.position) } : nil
        let renderer = AuditRenderer(format: .jsonl)
        // The records are already JSON text; they go into the page as rendered, not decoded and encoded again.
        var body = "{\"data\":["
        body += shown.map { renderer.line(for: $0.record) }.joined(separator: ",")
        body += "],\"nextCursor\":" + (next.map { JSONValue.string($0).encodedString() } ?? "null") + "}"
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }

    /// The cursor of the page after the record stored at `position`. Callers treat it as opaque; it is the position
    /// in decimal, so that it is stable across instances sharing the store.
    static func cursor(fromPosition position: Int64) -> String { String(position) }

    static func position(fromCursor cursor: String) -> Int64? {
        guard let position = Int64(cursor), position >= 0 else { return nil }
        return position
    }
}
