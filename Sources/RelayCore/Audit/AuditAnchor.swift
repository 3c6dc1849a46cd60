/// A point of a chain that verification starts from: the `seq` and `link` of the last record before the stretch.
///
/// A new chain starts at seq 0 with ``AuditChain/genesisLink``. After old records are pruned, the store keeps the
/// anchor of the first retained record's predecessor, so that what remains still verifies: a verifier started from
/// that anchor expects `seq + 1` next, chained onto `link`.
package struct AuditAnchor: Sendable, Equatable {
    package var chain: String
    /// The seq of the last record before the stretch (0 at the start of a chain).
    package var seq: Int64
    /// That record's link (the genesis link at seq 0).
    package var link: [UInt8]

    package init(chain: String, seq: Int64, link: [UInt8]) {
        self.chain = chain
        self.seq = seq
        self.link = link
    }

    /// The start of a new chain: seq 0 and the genesis link.
    package static func genesis(chain: String) -> AuditAnchor {
        AuditAnchor(chain: chain, seq: 0, link: AuditChain.genesisLink)
    }
}

/// JSON: `{"chain": …, "link": "<hex>", "seq": …}`.
extension AuditAnchor: Codable, AuditJSONCoded {
    static let fields: Set<String> = ["chain", "seq", "link"]

    package init(from decoder: any Decoder) throws { try self.init(jsonFrom: decoder) }

    package func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }

    var json: JSONValue {
        .object(["chain": .string(chain), "seq": .int(seq), "link": .string(AuditHex.encode(link))])
    }

    init(json: JSONValue, path: String) throws(AuditFieldError) {
        try self.init(reader: AuditJSONReader(json, path: path, fields: Self.fields))
    }

    init(reader: AuditJSONReader) throws(AuditFieldError) {
        self.init(
            chain: try reader.string("chain"),
            seq: try reader.int64("seq"),
            link: try reader.hexBytes("link", count: AuditChain.linkLength)
        )
    }
}
