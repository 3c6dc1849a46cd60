package import Foundation

/// Any JSON value, kept as the caller wrote it.
///
/// Requests are first decoded into a `JSONValue` and then parsed field by field, so that validation can report every
/// problem of a request at once, each with its path, instead of stopping at the first decoding error. Provider
/// payloads are built as `JSONValue` trees and encoded once, with sorted keys, so their bytes are deterministic.
///
/// Integers and fractional numbers are separate cases so that large integer ids in custom data survive unchanged;
/// equality compares numbers by value (`1` equals `1.0`).
package enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

extension JSONValue: Equatable {
    package static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): Double(exactly: a) == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }
}

extension JSONValue: Codable {
    package init(from decoder: any Decoder) throws {
        // Most values of a push are strings, then objects: trying them first spares failed (throwing) attempts.
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else {
            self = .array(try container.decode([JSONValue].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue {
    /// Decodes JSON bytes; `nil` when they are not JSON.
    package static func decode(_ bytes: some DataProtocol) -> JSONValue? {
        try? parse(bytes)
    }

    /// Decodes JSON bytes (``JSONTextReader``).
    ///
    /// - Throws: ``JSONSyntaxError``, saying why and where the bytes are not JSON.
    package static func parse(_ bytes: some DataProtocol) throws(JSONSyntaxError) -> JSONValue {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONSyntaxError) in try JSONTextReader.read(UnsafeRawBufferPointer(buffer)) }
        }
        if let result { return try result.get() }
        // Discontiguous bytes (a multi-region `DispatchData`, say) are copied once.
        return try Array(bytes).withUnsafeBytes { buffer in
            Result { () throws(JSONSyntaxError) in try JSONTextReader.read(buffer) }
        }.get()
    }

    /// The compact JSON text of this value, keys sorted, slashes unescaped: its canonical form (``CanonicalJSON``),
    /// written directly rather than through `JSONEncoder`, which cost several times as much on every provider payload
    /// and response.
    package func encodedBytes() -> [UInt8] {
        CanonicalJSON.encode(self)
    }

    /// The compact JSON text of this value as a string.
    package func encodedString() -> String {
        String(decoding: encodedBytes(), as: UTF8.self)
    }

    /// A short name of this value's JSON type, for error messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    package var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }

    package var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The value as an integer, accepting integral fractional numbers such as `3.0`.
    package var integerValue: Int64? {
        switch self {
        case .int(let value): value
        case .double(let value): Int64(exactly: value)
        default: nil
        }
    }

    /// The value as a number.
    package var numberValue: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
}
