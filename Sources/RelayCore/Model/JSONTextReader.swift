/// Why a text is not JSON, and where.
package struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
    /// The byte offset, from 0, at which the text stopped being JSON.
    package var offset: Int
    package var reason: String
    /// For a key that appears twice in one object, the path of that member (`messages[3].isCriticalAlert`), so that
    /// the caller can be told which field is ambiguous; `nil` for every other error.
    package var duplicateKeyPath: JSONPath?

    package init(offset: Int, reason: String, duplicateKeyPath: JSONPath? = nil) {
        self.offset = offset
        self.reason = reason
        self.duplicateKeyPath = duplicateKeyPath
    }

    package var description: String { "\(reason) (byte \(offset))" }
}

/// Reads JSON text into a ``JSONValue`` in one pass over its bytes.
///
/// Every push request body and every Expo response goes through here. Foundation's `JSONDecoder` reads them too, but
/// only through `Codable`: a `JSONValue` can't ask the decoder what comes next, so each value cost a chain of failed
/// (throwing) decoding attempts: 6–7 % of the relay's CPU time under load, more than the rest of request handling
/// together (Docs/benchmarks.md). This reader accepts exactly what `JSONDecoder` accepted before it, so no caller sees
/// a difference; `JSONTextReaderTests` compares the two on generated and mutated texts:
/// - RFC 8259 JSON in UTF-8, after an optional byte order mark; any value at the top level; whitespace around it.
/// - A trailing comma before `]` or `}` (`[1,]`), which `JSONDecoder` accepts.
/// - A key that appears twice in one object is an error naming the key and its path (`JSONDecoder` kept the first
///   value, where most JSON libraries, proxies and WAFs keep the last: two readers of one body would disagree).
/// - Numbers: an integer written plainly is ``JSONValue/int(_:)`` when it fits in 64 bits. Any other number is read
///   as a `Double`; when that is whole and fits, it is an `int` too (`1.0`, `1e2`, and `1.0000000000000001`, which
///   `Double` rounds to 1), taken from the text's digits from 2^53 up, where a `Double` is too coarse. The rest are
///   ``JSONValue/double(_:)``; a number beyond `Double`'s range is an error.
/// - Strings must be valid UTF-8, without raw control characters, and with paired `\u` surrogates.
/// - At most ``maximumDepth`` nested arrays and objects, so that a hostile body can't exhaust the stack.
package struct JSONTextReader: ~Copyable {
    /// The deepest nesting read (`JSONDecoder`'s limit too).
    package static let maximumDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Reads `bytes` as one JSON text.
    package static func read(_ bytes: UnsafeRawBufferPointer) throws(JSONSyntaxError) -> JSONValue {
        var reader = JSONTextReader(bytes)
        do {
            return try reader.readText()
        } catch let failure {
            guard let duplicate = reader.duplicate else { throw failure }
            // The path is put together only now, from the containers the error passed on its way out, so that
            // reading a good text never builds one.
            var path = JSONPath.root
            for component in duplicate.reversed() {
                switch component {
                case .key(let key): path = path.appending(key)
                case .index(let index): path = path.appending(index)
                }
            }
            var described = failure
            described.duplicateKeyPath = path
            throw described
        }
    }

    /// One step of a path, innermost first, collected as a duplicate-key error leaves each container.
    private enum PathComponent {
        case key(String)
        case index(Int)
    }

    /// The path of a repeated key, innermost step first, once one was found.
    private var duplicate: [PathComponent]?

    private mutating func readText() throws(JSONSyntaxError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        let value = try readValue()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the JSON value") }
        return value
    }

    // MARK: Values

    private mutating func readValue() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw failure("the text ends where a value should be") }
        switch bytes[index] {
        case .quote: return .string(try readString())
        case .openBrace: return try readObject()
        case .openBracket: return try readArray()
        case UInt8(ascii: "t"):
            try readWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try readWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try readWord("null")
            return .null
        case .minus, .digit0 ... .digit9: return try readNumber()
        default: throw failure("expected a value")
        }
    }

    private mutating func readWord(_ word: StaticString) throws(JSONSyntaxError) {
        let start = index
        let matched = word.withUTF8Buffer { expected in
            guard bytes.count - index >= expected.count else { return false }
            for (offset, byte) in expected.enumerated() where bytes[index + offset] != byte { return false }
            return true
        }
        guard matched else { throw failure("expected a value", at: start) }
        index += word.utf8CodeUnitCount
    }

    private mutating func readObject() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == .closeBrace {
            leaveContainer()
            return .object(members)
        }
        while true {
            guard index < bytes.count, bytes[index] == .quote else { throw failure("expected a string key") }
            let keyOffset = index
            let key = try readString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == .colon else { throw failure("expected ':' after a key") }
            index += 1
            skipWhitespace()
            let value: JSONValue
            do {
                value = try readValue()
            } catch let failure {
                duplicate?.append(.key(key))
                throw failure
            }
            guard members.updateValue(value, forKey: key) == nil else {
                duplicate = [.key(key)]
                let quoted = JSONValue.string(key).encodedString()
                throw failure("the key \(quoted) appears more than once in an object", at: keyOffset)
            }
            if try closes(.closeBrace, container: "an object", part: "a member") { return .object(members) }
        }
    }

    private mutating func readArray() throws(JSONSyntaxError) -> JSONValue {
        try enterContainer()
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == .closeBracket {
            leaveContainer()
            return .array(elements)
        }
        while true {
            do {
                elements.append(try readValue())
            } catch let failure {
                duplicate?.append(.index(elements.count))
                throw failure
            }
            if try closes(.closeBracket, container: "an array", part: "an element") { return .array(elements) }
        }
    }

    /// Reads what follows a member or an element: `true` when it ends the container (`closing`, or a trailing comma
    /// and `closing`), `false` after a comma that more follow.
    private mutating func closes(_ closing: UInt8, container: String, part: String) throws(JSONSyntaxError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw failure("the text ends inside \(container)") }
        switch bytes[index] {
        case .comma:
            index += 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == closing else { return false }
        case closing:
            break
        default:
            throw failure("expected ',' or '\(Character(Unicode.Scalar(closing)))' after \(part)")
        }
        leaveContainer()
        return true
    }

    /// Steps over the opening bracket or brace.
    private mutating func enterContainer() throws(JSONSyntaxError) {
        guard depth < Self.maximumDepth else {
            throw failure("arrays and objects nested more than \(Self.maximumDepth) deep")
        }
        depth += 1
        index += 1
    }

    /// Steps over the closing bracket or brace.
    private mutating func leaveContainer() {
        depth -= 1
        index += 1
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case .space, .tab, .lineFeed, .carriageReturn: index += 1
            default: return
            }
        }
    }

    // MARK: Strings

    private mutating func readString() throws(JSONSyntaxError) -> String {
        let opening = index
        index += 1
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case .quote:
                let content = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if ascii { return String(decoding: content, as: UTF8.self) }
                guard let text = String(validating: content, as: UTF8.self) else {
                    throw failure("a string that is not valid UTF-8", at: opening)
                }
                return text
            case .backslash:
                return try readEscapedString(opening: opening, start: start)
            case ..<0x20:
                throw failure("a control character in a string (escape it)")
            case 0x80...:
                ascii = false
            default:
                break
            }
            index += 1
        }
        throw failure("a string without its closing quote", at: opening)
    }

    /// The rest of a string from its first backslash, at `index`.
    private mutating func readEscapedString(opening: Int, start: Int) throws(JSONSyntaxError) -> String {
        var utf8 = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case .quote:
                index += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw failure("a string that is not valid UTF-8", at: opening)
                }
                return text
            case .backslash:
                index += 1
                guard index < bytes.count else { throw failure("a string without its closing quote", at: opening) }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case .quote, .backslash, .slash: utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(.lineFeed)
                case UInt8(ascii: "r"): utf8.append(.carriageReturn)
                case UInt8(ascii: "t"): utf8.append(.tab)
                case UInt8(ascii: "u"): UTF8.encode(try readEscapedScalar()) { utf8.append($0) }
                default: throw failure("an unknown escape in a string", at: index - 2)
                }
            case ..<0x20:
                throw failure("a control character in a string (escape it)")
            default:
                utf8.append(byte)
                index += 1
            }
        }
        throw failure("a string without its closing quote", at: opening)
    }

    /// The scalar of a `\uXXXX` escape whose `u` was just read, with the low half that must follow a high surrogate.
    private mutating func readEscapedScalar() throws(JSONSyntaxError) -> Unicode.Scalar {
        let escape = index - 2
        let unit = try readHexQuad()
        var value = UInt32(unit)
        switch unit {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 2, bytes[index] == .backslash, bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("a \\u escape of an unpaired surrogate", at: escape)
            }
            index += 2
            let low = try readHexQuad()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw failure("a \\u escape of an unpaired surrogate", at: escape)
            }
            value = 0x10000 + (UInt32(unit - 0xD800) << 10) + UInt32(low - 0xDC00)
        case 0xDC00...0xDFFF:
            throw failure("a \\u escape of an unpaired surrogate", at: escape)
        default:
            break
        }
        // Surrogates are handled above, so every value here is a scalar.
        guard let scalar = Unicode.Scalar(value) else { throw failure("an invalid \\u escape", at: escape) }
        return scalar
    }

    private mutating func readHexQuad() throws(JSONSyntaxError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw failure("a \\u escape needs four hex digits") }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = AuditHex.value(of: bytes[index]) else {
                throw failure("a \\u escape needs four hex digits")
            }
            unit = unit << 4 | UInt16(digit)
            index += 1
        }
        return unit
    }

    // MARK: Numbers

    private mutating func readNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        let negative = bytes[index] == .minus
        if negative { index += 1 }
        let integerStart = index
        guard index < bytes.count, bytes[index].isDigit else { throw failure("expected a digit", at: index) }
        if bytes[index] == .digit0 {
            index += 1
            if index < bytes.count, bytes[index].isDigit { throw failure("a number with a leading zero", at: start) }
        } else {
            skipDigits()
        }
        let integerEnd = index
        var fractionEnd = index
        if index < bytes.count, bytes[index] == .dot {
            index += 1
            guard index < bytes.count, bytes[index].isDigit else {
                throw failure("expected a digit after the decimal point", at: index)
            }
            skipDigits()
            fractionEnd = index
        }
        var exponent = 0
        let hasExponent =
            index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E"))
        if hasExponent {
            index += 1
            var exponentNegative = false
            if index < bytes.count, bytes[index] == .plus || bytes[index] == .minus {
                exponentNegative = bytes[index] == .minus
                index += 1
            }
            guard index < bytes.count, bytes[index].isDigit else {
                throw failure("expected a digit in the exponent", at: index)
            }
            while index < bytes.count, bytes[index].isDigit {
                // Clamped: beyond this every exponent means the same (zero or out of range).
                exponent = min(exponent * 10 + Int(bytes[index] - .digit0), 1_000_000)
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        let digits = Digits(
            bytes: bytes, integer: integerStart..<integerEnd,
            fraction: integerEnd == fractionEnd ? integerEnd..<integerEnd : integerEnd + 1..<fractionEnd,
            exponent: exponent, negative: negative
        )

        // JSONDecoder's reading, which this keeps: a plain integer exactly; anything else through `Double`, an
        // integer when that `Double` is whole and fits, with its value below 2^53 and the text's whole part above.
        if integerEnd == fractionEnd, !hasExponent, let integer = digits.wholePart() {
            return .int(integer)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text), double.isFinite else { throw failure("a number out of range", at: start) }
        guard let whole = Int64(exactly: double) else { return .double(double) }
        if double.magnitude < 0x1p53 { return .int(whole) }
        if let integer = digits.wholePart() { return .int(integer) }
        return .double(double)
    }

    private mutating func skipDigits() {
        while index < bytes.count, bytes[index].isDigit { index += 1 }
    }

    /// The digits of a number as written.
    private struct Digits {
        let bytes: UnsafeRawBufferPointer
        let integer: Range<Int>
        let fraction: Range<Int>
        let exponent: Int
        let negative: Bool

        /// The number without its fraction (`-12.7e1` → -127), when that fits in `Int64`.
        func wholePart() -> Int64? {
            var magnitude: UInt64 = 0
            // The digits before the decimal point, once the exponent has moved it.
            let count = integer.count + exponent
            guard count > 0 else { return 0 }
            for position in 0..<count {
                let digit: UInt8
                if position < integer.count {
                    digit = bytes[integer.lowerBound + position] - .digit0
                } else if position - integer.count < fraction.count {
                    digit = bytes[fraction.lowerBound + position - integer.count] - .digit0
                } else {
                    digit = 0
                }
                let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times10.addingReportingOverflow(UInt64(digit))
                guard !overflow, !carry else { return nil }
                magnitude = sum
            }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return Int64(bitPattern: 0 &- magnitude)
            }
            return Int64(exactly: magnitude)
        }
    }

    private func failure(_ reason: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(offset: offset ?? index, reason: reason)
    }
}

extension UInt8 {
    fileprivate static let tab: UInt8 = 0x09
    fileprivate static let lineFeed: UInt8 = 0x0A
    fileprivate static let carriageReturn: UInt8 = 0x0D
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let plus = UInt8(ascii: "+")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let minus = UInt8(ascii: "-")
    fileprivate static let dot = UInt8(ascii: ".")
    fileprivate static let slash = UInt8(ascii: "/")
    fileprivate static let digit0 = UInt8(ascii: "0")
    fileprivate static let digit9 = UInt8(ascii: "9")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let openBracket = UInt8(ascii: "[")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let closeBracket = UInt8(ascii: "]")
    fileprivate static let openBrace = UInt8(ascii: "{")
    fileprivate static let closeBrace = UInt8(ascii: "}")

    fileprivate var isDigit: Bool { self >= .digit0 && self <= .digit9 }
}
