/// The first line of each chain's section in an export file.
///
/// The header says which chain follows and where its stretch starts: ``anchor`` is the record before the first
/// exported one (seq 0 and the genesis link for a whole chain, or the pruning point). The anchor is not signed; what
/// makes a section trustworthy is that its records chain from the anchor to a checkpoint signed by the auditor's key.
package struct AuditExportHeader: Sendable, Equatable {
    package static let formatName = "pushrelay-audit-export"
    package static let currentVersion = 1

    /// Always ``formatName``.
    package var format: String
    /// The version of the file format; readers refuse versions they do not know.
    package var version: Int
    package var chain: String
    package var anchor: AuditAnchor
    package var exportedAtMillis: Int64
    /// The ``AuditPublicKey/keyID`` of the key that signed the checkpoints, when the exporter knew it.
    package var publicKeyID: String?

    package init(
        chain: String, anchor: AuditAnchor, exportedAtMillis: Int64, publicKeyID: String?,
        format: String = formatName, version: Int = currentVersion
    ) {
        self.format = format
        self.version = version
        self.chain = chain
        self.anchor = anchor
        self.exportedAtMillis = exportedAtMillis
        self.publicKeyID = publicKeyID
    }
}

extension AuditExportHeader: Codable, AuditJSONCoded {
    static let fields: Set<String> = ["format", "version", "chain", "anchor", "exportedAtMillis", "publicKeyID"]

    package init(from decoder: any Decoder) throws { try self.init(jsonFrom: decoder) }

    package func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }

    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "format": .string(format),
            "version": .int(Int64(version)),
            "chain": .string(chain),
            "anchor": anchor.json,
            "exportedAtMillis": .int(exportedAtMillis),
        ]
        if let publicKeyID { fields["publicKeyID"] = .string(publicKeyID) }
        return .object(fields)
    }

    /// Reads a header and checks that it is one this version understands and that its anchor is its chain's.
    init(json: JSONValue, path: String) throws(AuditFieldError) {
        let reader = try AuditJSONReader(json, path: path, fields: Self.fields)
        let format = try reader.string("format")
        guard format == Self.formatName else {
            throw AuditFieldError(field: reader.name("format"), reason: "expected \"\(Self.formatName)\"")
        }
        guard let version = try reader.optionalInt("version") else {
            throw AuditFieldError(field: reader.name("version"), reason: "missing")
        }
        guard version == Self.currentVersion else {
            throw AuditFieldError(
                field: reader.name("version"),
                reason: "unsupported version \(version) (this build reads version \(Self.currentVersion))")
        }
        let chain = try reader.string("chain")
        let anchor = try AuditAnchor(reader: reader.object("anchor", fields: AuditAnchor.fields))
        guard anchor.chain == chain else {
            throw AuditFieldError(
                field: reader.name("anchor.chain"), reason: "expected \"\(chain)\", the header's chain")
        }
        self.init(
            chain: chain, anchor: anchor, exportedAtMillis: try reader.int64("exportedAtMillis"),
            publicKeyID: try reader.optionalString("publicKeyID"), format: format, version: version)
    }
}
