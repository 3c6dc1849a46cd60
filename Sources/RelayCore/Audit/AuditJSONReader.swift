/// A field of an audit JSON object that is missing, of the wrong type or malformed.
struct AuditFieldError: Error, Equatable, CustomStringConvertible {
    /// The dotted path of the field, e.g. `record.seq`.
    var field: String
    var reason: String

    var description: String { field.isEmpty ? reason : "\(field): \(reason)" }
}

/// Reads the fields of one JSON object strictly, naming the field in every error.
///
/// Audit files are read back to be verified, so the reader refuses what it does not understand: an unknown field
/// (a file from a newer version, or an edit) is an error rather than something silently dropped, which would
/// otherwise surface later as a misleading "modified" record.
struct AuditJSONReader {
    private let path: String
    private let members: [String: JSONValue]

    /// - Parameters:
    ///   - value: must be an object.
    ///   - path: the object's own path, prefixed to field names in errors (empty at the top level).
    ///   - fields: every field the object may have.
    init(_ value: JSONValue, path: String, fields: Set<String>) throws(AuditFieldError) {
        guard case .object(let members) = value else {
            throw AuditFieldError(field: path, reason: "expected an object, got \(value.typeName)")
        }
        self.path = path
        self.members = members
        let unknown = members.keys.filter { !fields.contains($0) }.sorted()
        if let first = unknown.first {
            throw AuditFieldError(field: name(first), reason: "unknown field")
        }
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The value of `key`; a JSON `null` counts as absent.
    private func present(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    private func require(_ key: String) throws(AuditFieldError) -> JSONValue {
        guard let value = present(key) else { throw AuditFieldError(field: name(key), reason: "missing") }
        return value
    }

    func string(_ key: String) throws(AuditFieldError) -> String {
        let value = try require(key)
        guard let text = value.stringValue else { throw mismatch(key, "a string", value) }
        return text
    }

    func optionalString(_ key: String) throws(AuditFieldError) -> String? {
        guard present(key) != nil else { return nil }
        return try string(key)
    }

    func int64(_ key: String) throws(AuditFieldError) -> Int64 {
        let value = try require(key)
        guard let number = value.integerValue else { throw mismatch(key, "an integer", value) }
        return number
    }

    func optionalInt(_ key: String) throws(AuditFieldError) -> Int? {
        guard present(key) != nil else { return nil }
        let number = try int64(key)
        guard let result = Int(exactly: number) else {
            throw AuditFieldError(field: name(key), reason: "integer out of range")
        }
        return result
    }

    func optionalBool(_ key: String) throws(AuditFieldError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let flag) = value else { throw mismatch(key, "a boolean", value) }
        return flag
    }

    /// A JSON value as written; here `null` is a value, distinct from an absent field, because both are hashed
    /// differently (an absent field is left out of the canonical bytes, `null` is not).
    func optionalJSON(_ key: String) -> JSONValue? {
        members[key]
    }

    /// Bytes written as hex; exactly `count` of them unless `count` is `nil`.
    func hexBytes(_ key: String, count: Int?) throws(AuditFieldError) -> [UInt8] {
        let text = try string(key)
        guard let bytes = AuditHex.decode(text) else {
            throw AuditFieldError(field: name(key), reason: "expected hexadecimal digits")
        }
        if let count, bytes.count != count {
            throw AuditFieldError(
                field: name(key), reason: "expected \(count * 2) hex digits (\(count) bytes), got \(text.utf8.count)")
        }
        return bytes
    }

    func object(_ key: String, fields: Set<String>) throws(AuditFieldError) -> AuditJSONReader {
        try AuditJSONReader(try require(key), path: name(key), fields: fields)
    }

    private func mismatch(_ key: String, _ expected: String, _ value: JSONValue) -> AuditFieldError {
        AuditFieldError(field: name(key), reason: "expected \(expected), got \(value.typeName)")
    }
}

/// Audit values kept as JSON objects (records, anchors, checkpoints, export headers): `Codable` through their
/// `JSONValue` form, decoded strictly by ``AuditJSONReader``, so every type reports a bad field the same way.
protocol AuditJSONCoded {
    init(json: JSONValue, path: String) throws(AuditFieldError)
    var json: JSONValue { get }
}

extension AuditJSONCoded {
    /// Decodes through `init(json:path:)`, turning its error into a `DecodingError` that names the field.
    init(jsonFrom decoder: any Decoder) throws {
        let value = try JSONValue(from: decoder)
        do throws(AuditFieldError) {
            try self.init(json: value, path: "")
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }
}
