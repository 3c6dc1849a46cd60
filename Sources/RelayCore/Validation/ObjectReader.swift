/// Reads typed fields out of a JSON object, recording a ``ValidationIssue`` for every field of the wrong type.
///
/// `null` reads as absent for every field; fields where `null` means something (`sound`) are read raw.
struct ObjectReader {
    let object: [String: JSONValue]
    let path: JSONPath
    var issues: [ValidationIssue] = []

    init(_ object: [String: JSONValue], at path: JSONPath) {
        self.object = object
        self.path = path
    }

    /// Records every key outside `known`, suggesting the closest known name for a likely typo (for the first
    /// ``ValidationFailure/maximumIssues`` only: those beyond are counted, never shown, and a suggestion costs an edit
    /// distance to every known name).
    mutating func rejectUnknownKeys(_ known: Set<String>) {
        var suggested = 0
        for key in object.keys.sorted() where !known.contains(key) {
            var message = "unknown field '\(key)'"
            if suggested < ValidationFailure.maximumIssues,
                let suggestion = NameSuggestion.closest(to: key, among: known, maxDistance: 2)
            {
                message += "; did you mean '\(suggestion)'?"
            }
            suggested += 1
            issues.append(ValidationIssue(path.appending(key), message))
        }
    }

    func raw(_ key: String) -> JSONValue? {
        object[key]
    }

    mutating func string(_ key: String) -> String? {
        switch object[key] {
        case nil, .null: return nil
        case .string(let value): return value
        case let other?:
            mismatch(key, expected: "a string", got: other)
            return nil
        }
    }

    mutating func bool(_ key: String) -> Bool? {
        switch object[key] {
        case nil, .null: return nil
        case .bool(let value): return value
        case let other?:
            mismatch(key, expected: "a boolean", got: other)
            return nil
        }
    }

    /// An integer; fractional values and values beyond `Int` are type errors.
    mutating func integer(_ key: String) -> Int64? {
        switch object[key] {
        case nil, .null: return nil
        case let value? where value.integerValue != nil: return value.integerValue
        case let other?:
            mismatch(key, expected: "an integer", got: other)
            return nil
        }
    }

    /// A number, integer or not.
    mutating func number(_ key: String) -> Double? {
        switch object[key] {
        case nil, .null: return nil
        case let value? where value.numberValue != nil: return value.numberValue
        case let other?:
            mismatch(key, expected: "a number", got: other)
            return nil
        }
    }

    /// An array of strings; each element of another type is reported at its index.
    mutating func strings(_ key: String) -> [String]? {
        switch object[key] {
        case nil, .null: return nil
        case .array(let elements):
            var strings: [String] = []
            for (index, element) in elements.enumerated() {
                if let text = element.stringValue {
                    strings.append(text)
                } else {
                    issues.append(
                        ValidationIssue(
                            path.appending(key).appending(index), "must be a string, not \(element.typeName)"))
                }
            }
            return strings.count == elements.count ? strings : nil
        case let other?:
            mismatch(key, expected: "an array of strings", got: other)
            return nil
        }
    }

    mutating func object(_ key: String) -> [String: JSONValue]? {
        switch object[key] {
        case nil, .null: return nil
        case .object(let value): return value
        case let other?:
            mismatch(key, expected: "an object", got: other)
            return nil
        }
    }

    /// One of an enumeration's raw values.
    mutating func enumeration<E: RawRepresentable & CaseIterable>(_ key: String, _: E.Type) -> E?
    where E.RawValue == String {
        guard let text = string(key) else { return nil }
        if let value = E(rawValue: text) { return value }
        let allowed = E.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        issues.append(ValidationIssue(path.appending(key), "must be one of \(allowed)"))
        return nil
    }

    mutating func mismatch(_ key: String, expected: String, got value: JSONValue) {
        issues.append(ValidationIssue(path.appending(key), "must be \(expected), not \(value.typeName)"))
    }
}
