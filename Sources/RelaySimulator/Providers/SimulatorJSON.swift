internal import Foundation

/// A JSON value, as the simulator reads request bodies and writes answers.
///
/// The simulator needs exact JSON types (a JWT `iat` must be a number, an FCM `data` value a string, `true` is not
/// `1`), which `JSONSerialization`'s `NSNumber`s blur; so bodies decode into this enum, strictly, with
/// `JSONDecoder`. Answers are written by ``text``: compact, keys in the order given, so a test can compare bytes.
package enum SimulatorJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([SimulatorJSON])
    /// An object; parsing keeps the last of duplicate keys and sorts keys, writing keeps the order given.
    case object([(key: String, value: SimulatorJSON)])

    /// Parses `bytes` as one JSON value (any type at the top level), or returns `nil` when they are not JSON.
    package init?(parsing bytes: some Collection<UInt8>) {
        guard let value = try? JSONDecoder().decode(SimulatorJSON.self, from: Data(bytes)) else {
            return nil
        }
        self = value
    }

    // MARK: - Reading

    /// The member called `key` of an object; `nil` for other values or a missing key.
    package subscript(key: String) -> SimulatorJSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    /// The element at `index` of an array; `nil` for other values or an index out of range.
    package subscript(index: Int) -> SimulatorJSON? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    package var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    package var numberValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    package var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    package var arrayValue: [SimulatorJSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members of an object, in order.
    package var objectValue: [(key: String, value: SimulatorJSON)]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The keys of an object, in order; `nil` for other values.
    package var keys: [String]? {
        self.objectValue?.map(\.key)
    }

    // MARK: - Writing

    /// Compact JSON text: no spaces, object keys in their stored order, `/` not escaped.
    package var text: String {
        var output = ""
        self.write(to: &output)
        return output
    }

    /// ``text`` as UTF-8 bytes.
    package var bytes: [UInt8] {
        Array(self.text.utf8)
    }

    private func write(to output: inout String) {
        switch self {
        case .null:
            output += "null"
        case .bool(let value):
            output += value ? "true" : "false"
        case .number(let value):
            output += Self.format(value)
        case .string(let value):
            Self.writeString(value, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(member.key, to: &output)
                output += ":"
                member.value.write(to: &output)
            }
            output += "}"
        }
    }

    /// Integers (the common case: codes, seconds, milliseconds) without a fraction, everything else as Swift prints a
    /// `Double`; JSON has no NaN or infinity, so those become `null`.
    private static func format(_ value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {  // 2^53: every integer below is exact
            return String(Int64(value))
        }
        return String(value)
    }

    private static func writeString(_ value: String, to output: inout String) {
        output += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case let control where control.value < 0x20:
                output +=
                    "\\u" + String(repeating: "0", count: 4 - String(control.value, radix: 16).count)
                    + String(control.value, radix: 16)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }

    // MARK: - Equality

    package static func == (lhs: SimulatorJSON, rhs: SimulatorJSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let l), .bool(let r)): l == r
        case (.number(let l), .number(let r)): l == r
        case (.string(let l), .string(let r)): l == r
        case (.array(let l), .array(let r)): l == r
        case (.object(let l), .object(let r)):
            l.count == r.count && zip(l, r).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    package func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(value)
        case .number(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .array(let elements): hasher.combine(elements)
        case .object(let members):
            hasher.combine(members.count)
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }
}

extension SimulatorJSON: Decodable {
    package init(from decoder: any Decoder) throws {
        // Keyed first: a single-value container would refuse an object or array anyway.
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: SimulatorJSON] = [:]
            for key in keyed.allKeys {
                members[key.stringValue] = try keyed.decode(SimulatorJSON.self, forKey: key)
            }
            self = .object(members.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) })
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [SimulatorJSON] = []
            while !unkeyed.isAtEnd {
                elements.append(try unkeyed.decode(SimulatorJSON.self))
            }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Double.self) {
            self = .number(value)
        } else {
            self = .string(try single.decode(String.self))
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension SimulatorJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int) { self = .number(Double(value)) }
    package init(floatLiteral value: Double) { self = .number(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: SimulatorJSON...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, SimulatorJSON)...) {
        self = .object(elements.map { (key: $0.0, value: $0.1) })
    }
}
