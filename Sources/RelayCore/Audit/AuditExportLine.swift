/// One line of an audit export file (JSON Lines).
///
/// ### Overview
/// An export is a sequence of sections, one per chain, each a ``header(_:)`` line followed by that chain's records in
/// order, each signed ``checkpoint(_:)`` right after the record it signs. Every line is a JSON object with exactly one
/// key naming its kind:
///
/// ```
/// {"header":{"anchor":{"chain":"c1","link":"00…00","seq":0},"chain":"c1",…,"version":1}}
/// {"record":{"chain":"c1","event":"push","link":"9f…","seq":1,"time":1800000000000,…}}
/// {"checkpoint":{"chain":"c1","keyID":"…","link":"9f…","seq":1,"signature":"…","time":…}}
/// {"exportCheckpoint":{"chain":"c1","keyID":"…","link":"a0…","seq":7,"signature":"…","time":…}}
/// ```
///
/// An ``exportCheckpoint(_:)`` is a signature `audit export` made when it wrote the file, for a section whose last
/// record the relay had not signed itself; it is signed with ``AuditCheckpoint/exportMessageType``, so it cannot be
/// relabelled as a relay checkpoint, and verifiers report the two kinds apart.
///
/// Bytes (links, signatures) are lowercase hex; times are milliseconds since 1970. Lines are written as canonical
/// JSON, so a record line holds exactly the record's canonical bytes plus its link, and an auditor can recompute
/// every link with any JSON tool.
package enum AuditExportLine: Sendable, Equatable {
    case header(AuditExportHeader)
    case record(AuditRecord)
    case checkpoint(AuditCheckpoint)
    /// A checkpoint signed at export time (``AuditCheckpoint/madeAtExport`` is true).
    case exportCheckpoint(AuditCheckpoint)

    /// The line's JSON text, without a line break.
    package func encode() -> String {
        let (kind, body): (String, JSONValue) =
            switch self {
            case .header(let header): ("header", header.json)
            case .record(let record): ("record", record.json)
            case .checkpoint(let checkpoint): ("checkpoint", checkpoint.json)
            case .exportCheckpoint(let checkpoint): ("exportCheckpoint", checkpoint.json)
            }
        return CanonicalJSON.string(.object([kind: body]))
    }

    /// Reads one line.
    /// - Parameters:
    ///   - line: the line's text, without its line break.
    ///   - lineNumber: its 1-based number, for the error.
    /// - Throws: ``AuditExportError`` naming the line and, when one is at fault, the field.
    package static func decode(line: String, lineNumber: Int) throws(AuditExportError) -> AuditExportLine {
        guard let value = JSONValue.decode(Array(line.utf8)) else {
            throw AuditExportError(line: lineNumber, field: nil, reason: "not valid JSON")
        }
        guard case .object(let members) = value, members.count == 1, let member = members.first else {
            throw AuditExportError(
                line: lineNumber, field: nil,
                reason: "expected an object with exactly one key: header, record, checkpoint or exportCheckpoint")
        }
        let (kind, body) = (member.key, member.value)
        do throws(AuditFieldError) {
            switch kind {
            case "header": return .header(try AuditExportHeader(json: body, path: kind))
            case "record": return .record(try AuditRecord(json: body, path: kind))
            case "checkpoint": return .checkpoint(try AuditCheckpoint(json: body, path: kind))
            case "exportCheckpoint":
                return .exportCheckpoint(try AuditCheckpoint(json: body, path: kind, madeAtExport: true))
            default:
                throw AuditFieldError(
                    field: "",
                    reason: "unknown line kind \"\(kind)\" (header, record, checkpoint or exportCheckpoint)")
            }
        } catch {
            throw AuditExportError(
                line: lineNumber, field: error.field.isEmpty ? nil : error.field, reason: error.reason)
        }
    }
}
