package import Foundation

/// A signed statement that a chain's record `seq` has link `link`.
///
/// ### Overview
/// The hash chain alone shows that records are consistent with each other, not that they are the records that were
/// written: whoever can edit the store can rewrite a record and recompute every later link. Checkpoints close that
/// gap. The writer periodically signs its chain's head with an Ed25519 key kept outside the store; a verifier holding
/// the public key then knows that every record up to a checkpoint's `seq` is exactly as written, and an export is
/// complete up to its last checkpoint.
///
/// The signature covers ``signedMessage``: the canonical JSON of `chain`, `seq`, `link` (lowercase hex), `time`
/// (milliseconds), `keyID` and a `type` naming this format, so a signature cannot be replayed for another chain,
/// position, key or purpose.
package struct AuditCheckpoint: Sendable, Equatable {
    /// The message type inside the signed bytes; a new format gets a new name.
    package static let messageType = "pushrelay-audit-checkpoint-v1"
    /// The message type of a checkpoint signed by `audit export` when the file was written, rather than by the relay
    /// as the records were written. It is part of the signed bytes, so an export-time signature cannot be passed off
    /// as one of the relay's own checkpoints (its signature would no longer verify).
    package static let exportMessageType = "pushrelay-audit-export-checkpoint-v1"

    package var chain: String
    package var seq: Int64
    package var link: [UInt8]
    package var timeMillis: Int64
    /// The signing key's ``AuditPublicKey/keyID``.
    package var keyID: String
    /// The 64-byte Ed25519 signature of ``signedMessage``.
    package var signature: [UInt8]
    /// Whether `audit export` signed it when it wrote the file (an `exportCheckpoint` line), rather than the relay
    /// when the records were written. Not a JSON field: the export line's kind carries it, and the signed message's
    /// type binds it.
    package var madeAtExport: Bool

    package init(
        chain: String, seq: Int64, link: [UInt8], timeMillis: Int64, keyID: String, signature: [UInt8],
        madeAtExport: Bool = false
    ) {
        self.chain = chain
        self.seq = seq
        self.link = link
        self.timeMillis = timeMillis
        self.keyID = keyID
        self.signature = signature
        self.madeAtExport = madeAtExport
    }

    /// The time of signing, at millisecond precision.
    package var time: Date {
        get { AuditTime.date(millis: timeMillis) }
        set { timeMillis = AuditTime.millis(newValue) }
    }

    /// The bytes the signature covers.
    package var signedMessage: [UInt8] {
        Self.signedMessage(
            chain: chain, seq: seq, link: link, timeMillis: timeMillis, keyID: keyID, madeAtExport: madeAtExport)
    }

    static func signedMessage(
        chain: String, seq: Int64, link: [UInt8], timeMillis: Int64, keyID: String, madeAtExport: Bool
    ) -> [UInt8] {
        CanonicalJSON.encode(
            .object([
                "chain": .string(chain),
                "seq": .int(seq),
                "link": .string(AuditHex.encode(link)),
                "time": .int(timeMillis),
                "keyID": .string(keyID),
                "type": .string(madeAtExport ? exportMessageType : messageType),
            ]))
    }
}

/// JSON: `{"chain", "keyID", "link" (hex), "seq", "signature" (hex), "time" (milliseconds)}`.
extension AuditCheckpoint: Codable, AuditJSONCoded {
    static let fields: Set<String> = ["chain", "seq", "link", "time", "keyID", "signature"]

    package init(from decoder: any Decoder) throws { try self.init(jsonFrom: decoder) }

    package func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }

    var json: JSONValue {
        .object([
            "chain": .string(chain),
            "seq": .int(seq),
            "link": .string(AuditHex.encode(link)),
            "time": .int(timeMillis),
            "keyID": .string(keyID),
            "signature": .string(AuditHex.encode(signature)),
        ])
    }

    init(json: JSONValue, path: String) throws(AuditFieldError) {
        try self.init(json: json, path: path, madeAtExport: false)
    }

    init(json: JSONValue, path: String, madeAtExport: Bool) throws(AuditFieldError) {
        let reader = try AuditJSONReader(json, path: path, fields: Self.fields)
        self.init(
            chain: try reader.string("chain"),
            seq: try reader.int64("seq"),
            link: try reader.hexBytes("link", count: AuditChain.linkLength),
            timeMillis: try reader.int64("time"),
            keyID: try reader.string("keyID"),
            // Any length decodes; a wrong one is then reported as a bad signature, with the checkpoint's seq.
            signature: try reader.hexBytes("signature", count: nil),
            madeAtExport: madeAtExport
        )
    }
}
