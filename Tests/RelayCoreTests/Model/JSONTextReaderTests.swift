import Foundation
import Testing

@testable import RelayCore

/// `JSONTextReader` must accept exactly what Foundation's `JSONDecoder` accepted (through `JSONValue`'s `Codable`
/// conformance, which the relay used before), with the same values: numbers in the same case (`int` or `double`);
/// except a key repeated in one object, which `JSONDecoder` read as its first value and this refuses (issue 20).
@Suite("JSON text reader")
struct JSONTextReaderTests {
    /// What `JSONDecoder` makes of `bytes`, the reference.
    private static func reference(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    /// Equal and of the same shape: unlike `==`, `int(1)` and `double(1.0)` differ.
    private static func identical(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (.int(let x)?, .int(let y)?): x == y
        case (.double(let x)?, .double(let y)?): x.bitPattern == y.bitPattern
        case (.array(let x)?, .array(let y)?): x.count == y.count && zip(x, y).allSatisfy { identical($0, $1) }
        case (.object(let x)?, .object(let y)?): x.count == y.count && x.allSatisfy { identical($0.value, y[$0.key]) }
        case (.int?, _), (.double?, _), (.array?, _), (.object?, _): false
        default: a == b
        }
    }

    @Test(
        "Pinned readings: numbers, strings, trailing commas, byte order mark",
        arguments: [
            ("[1.0, 1e2, 1.5, -0, -0.0, 1E+2, 1.5e1, 0.5e-1]", "[1,100,1.5,0,0,100,15,0.05]"),
            (
                "[9223372036854775807, -9223372036854775808, 9223372036854775808]",
                "[9223372036854775807,-9223372036854775808,9223372036854775808.0]"
            ),
            (
                "[9007199254740993.0, 1.2345678901234567e17, 1e-400, 1.00000000000000000001]",
                "[9007199254740993,123456789012345670,0,1]"
            ),
            // Whole below 2^53 as a Double; above, the whole part of the text; beyond Int64, a Double.
            (
                "[9223372036854775.808, -922337203685477580.8, 92233720368547758070e-1, -9223372036854775809]",
                "[9223372036854775,-922337203685477580,9223372036854775808.0,-9223372036854775808.0]"
            ),
            (
                #"["\u00e9\uD83D\uDE00", "a\/b", "\u0000", "\"\\\b\f\n\r\t"]"#,
                #"["é😀","a/b","\u0000","\"\\\b\f\n\r\t"]"#
            ),
            ("[1 , ]", "[1]"),
            (#"{"a" : 1 , }"#, #"{"a":1}"#),
            ("\u{FEFF} {\"a\":[]} \r\n\t", #"{"a":[]}"#),
            (" 7 ", "7"),
        ]
    )
    func pinned(text: String, expected: String) throws {
        let value = try #require(JSONValue.decode(Array(text.utf8)))
        #expect(Self.identical(value, Self.reference(Array(text.utf8))))
        let written = try #require(Self.reference(Array(expected.utf8)), "the expected value is JSON")
        #expect(Self.identical(value, written), "\(value)")
    }

    @Test(
        "Texts that are not JSON, each with where and why",
        arguments: [
            ("", 0, "the text ends where a value should be"),
            ("[,]", 1, "expected a value"),
            ("[1,,2]", 3, "expected a value"),
            ("{,}", 1, "expected a string key"),
            (#"{"a"}"#, 4, "expected ':' after a key"),
            ("{1:2}", 1, "expected a string key"),
            (#"{"a":1}x"#, 7, "unexpected text after the JSON value"),
            ("[true false]", 6, "expected ',' or ']' after an element"),
            ("nul", 0, "expected a value"),
            ("[01]", 1, "a number with a leading zero"),
            ("[1.]", 3, "expected a digit after the decimal point"),
            ("[.5]", 1, "expected a value"),
            ("[+1]", 1, "expected a value"),
            ("[-]", 2, "expected a digit"),
            ("[1e]", 3, "expected a digit in the exponent"),
            ("[1e400]", 1, "a number out of range"),
            ("\"a\tb\"", 2, "a control character in a string (escape it)"),
            (#"["\x"]"#, 2, "an unknown escape in a string"),
            (#""\ud800""#, 1, #"a \u escape of an unpaired surrogate"#),
            (#""\udc00\ud800""#, 1, #"a \u escape of an unpaired surrogate"#),
            (#""\u12G4""#, 5, #"a \u escape needs four hex digits"#),
            (#"["abc"#, 1, "a string without its closing quote"),
            (#"{"a":[1"#, 7, "the text ends inside an array"),
        ]
    )
    func rejected(text: String, offset: Int, reason: String) {
        let bytes = Array(text.utf8)
        #expect(Self.reference(bytes) == nil, "JSONDecoder accepts it too")
        #expect(throws: JSONSyntaxError(offset: offset, reason: reason)) { try JSONValue.parse(bytes) }
    }

    @Test(
        "A key repeated in one object is refused, at any depth, with its path",
        arguments: [
            (#"{"isCriticalAlert":false,"isCriticalAlert":true}"#, 25, "isCriticalAlert", #""isCriticalAlert""#),
            (#"{"messages":[{"to":"x"},{"to":"a","to":"b"}]}"#, 34, "messages[1].to", #""to""#),
            (#"[[{"a":{"b":1,"b":1}}]]"#, 14, "[0][0].a.b", #""b""#),
            (#"{"data":{"google.x":1,"google.x":2}}"#, 22, #"data["google.x"]"#, #""google.x""#),
            (#"{"":1,"":2}"#, 6, #"[""]"#, #""""#),
        ]
    )
    func duplicateKeys(text: String, offset: Int, path: String, quotedKey: String) throws {
        let bytes = Array(text.utf8)
        #expect(Self.reference(bytes) != nil, "JSONDecoder read it, keeping the first value")
        let error = try #require(throws: JSONSyntaxError.self) { try JSONValue.parse(bytes) }
        #expect(error.offset == offset)
        #expect(error.reason == "the key \(quotedKey) appears more than once in an object")
        #expect(error.duplicateKeyPath?.description == path)
        // The push request reader names the field and its path.
        let failure = ValidationFailure(notJSON: error)
        #expect(failure.issues.map(\.path) == [path])
        #expect(failure.issues.first?.message.contains("appears more than once") == true)
    }

    @Test("The same key in different objects is not a repetition")
    func sameKeyInSiblingObjects() {
        #expect(JSONValue.decode(Array(#"[{"a":1},{"a":2},{"b":{"a":3}}]"#.utf8)) != nil)
    }

    @Test("Stricter than JSONDecoder: UTF-16 is not JSON")
    func stricter() {
        // JSONDecoder guesses UTF-16 from NUL bytes; RFC 8259 says JSON between systems is UTF-8.
        let utf16: [UInt8] = [0x2D, 0x00, 0x31, 0x00]
        #expect(Self.reference(utf16) == .int(-1))
        #expect(JSONValue.decode(utf16) == nil)
    }

    @Test("A string of bytes that are not UTF-8 is refused")
    func invalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0x5C, 0x6E, 0xED, 0xA0, 0x80, 0x22]] {
            #expect(Self.reference(bytes) == nil)
            #expect(throws: JSONSyntaxError(offset: 0, reason: "a string that is not valid UTF-8")) {
                try JSONValue.parse(bytes)
            }
        }
    }

    @Test("Nesting stops at 512 levels, and a megabyte of brackets is an error, not a crash")
    func depth() {
        func nested(_ depth: Int) -> [UInt8] {
            Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
        }
        #expect(JSONValue.decode(nested(512)) != nil)
        #expect(Self.reference(nested(512)) != nil)
        #expect(JSONValue.decode(nested(513)) == nil)
        #expect(Self.reference(nested(513)) == nil)
        #expect(throws: JSONSyntaxError(offset: 512, reason: "arrays and objects nested more than 512 deep")) {
            try JSONValue.parse([UInt8](repeating: UInt8(ascii: "["), count: 1 << 20))
        }
    }

    @Test("Generated texts read as JSONDecoder reads them")
    func generated() {
        var random = SeededGenerator(seed: 0x5EED_0001)
        for round in 0..<2_000 {
            var text: [UInt8] = []
            TextGenerator.value(depth: 0, repeatingKeys: false, into: &text, using: &random)
            let ours = JSONValue.decode(text)
            let theirs = Self.reference(text)
            #expect(ours != nil, "round \(round): \(String(decoding: text, as: UTF8.self))")
            #expect(Self.identical(ours, theirs), "round \(round): \(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test("Mutated texts: accepted and refused alike, with the same values")
    func mutated() {
        var random = SeededGenerator(seed: 0x5EED_0002)
        // No NUL: JSONDecoder reads text with NULs between the characters as UTF-16 (below).
        let inserts = Array(#"[]{},:"\-+.eE019tfnu "#.utf8) + [0x01, 0x09, 0x0A, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xFF]
        var refused = 0
        for round in 0..<4_000 {
            var text: [UInt8] = []
            // Keys distinct: JSONDecoder leaves the value of a repeated key unread (below).
            TextGenerator.value(depth: 0, repeatingKeys: false, into: &text, using: &random)
            for _ in 0..<Int.random(in: 1...2, using: &random) where !text.isEmpty {
                let position = Int.random(in: 0..<text.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: text.remove(at: position)
                case 1: text.insert(inserts.randomElement(using: &random) ?? 0, at: position)
                default: text[position] = inserts.randomElement(using: &random) ?? 0
                }
            }
            // A mutation can make two keys equal ("k1" becoming "k0"), which only this reader refuses.
            if case .failure(let error) = Result(catching: { () throws(JSONSyntaxError) in try JSONValue.parse(text) }),
                error.duplicateKeyPath != nil
            {
                refused += 1
                continue
            }
            let ours = JSONValue.decode(text)
            if ours == nil { refused += 1 }
            #expect(Self.identical(ours, Self.reference(text)), "round \(round): \(text)")
        }
        // Both outcomes are well represented, or the comparison proves little.
        #expect((500...3_500).contains(refused), "refused \(refused) of 4000")
    }
}

/// Random JSON texts, spelled in the many ways JSON allows.
private enum TextGenerator {
    static let whitespace = [" ", "", "", "\t", "\n", "\r\n", "  "]
    static let stringPieces = [
        "a", "key", "Hello", "é", "😀", "中文", #"\""#, #"\\"#, #"\/"#, #"\n"#, #"\t"#, #"\b"#, #"\f"#, #"\r"#,
        #"\u0041"#, #"\u00e9"#, #"\uD83D\uDE00"#, #"\u0000"#, #"\u001F"#, "\u{7F}", " ", "",
    ]
    static let numbers = [
        "0", "-0", "1", "-1", "42", "123456789", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "18446744073709551616", "1.0", "1.5", "-0.25", "2.500", "0.1", "3.14159", "1e2", "1E2", "1e+2", "1e-2",
        "1.5E-3", "2e10", "-2.5e+10", "123.456e-2", "0e0", "0.0", "1e18", "1e19", "-1e19", "5e-324",
        "1.7976931348623157e308", "9007199254740993.0", "1.2345678901234567e17", "100e-2", "1.0000000000000001",
    ]

    static func space(_ text: inout [UInt8], _ random: inout SeededGenerator) {
        text += Array((whitespace.randomElement(using: &random) ?? "").utf8)
    }

    static func string(into text: inout [UInt8], using random: inout SeededGenerator) {
        text.append(UInt8(ascii: "\""))
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            text += Array((stringPieces.randomElement(using: &random) ?? "").utf8)
        }
        text.append(UInt8(ascii: "\""))
    }

    static func value(
        depth: Int, repeatingKeys: Bool = true, into text: inout [UInt8], using random: inout SeededGenerator
    ) {
        space(&text, &random)
        let kinds = depth < 4 ? 8 : 6
        switch Int.random(in: 0..<kinds, using: &random) {
        case 0: text += Array("null".utf8)
        case 1: text += Array((Bool.random(using: &random) ? "true" : "false").utf8)
        case 2, 3: text += Array((numbers.randomElement(using: &random) ?? "0").utf8)
        case 4, 5: string(into: &text, using: &random)
        case 6:
            text.append(UInt8(ascii: "["))
            let count = Int.random(in: 0...4, using: &random)
            for element in 0..<count {
                if element > 0 { text.append(UInt8(ascii: ",")) }
                value(depth: depth + 1, repeatingKeys: repeatingKeys, into: &text, using: &random)
            }
            if count > 0, Int.random(in: 0..<8, using: &random) == 0 { text.append(UInt8(ascii: ",")) }
            space(&text, &random)
            text.append(UInt8(ascii: "]"))
        default:
            text.append(UInt8(ascii: "{"))
            let count = Int.random(in: 0...4, using: &random)
            for member in 0..<count {
                if member > 0 { text.append(UInt8(ascii: ",")) }
                space(&text, &random)
                // Few distinct keys, so that some repeat.
                text += Array("\"k\(repeatingKeys ? Int.random(in: 0 ..< 5, using: &random) : member)\"".utf8)
                space(&text, &random)
                text.append(UInt8(ascii: ":"))
                value(depth: depth + 1, repeatingKeys: repeatingKeys, into: &text, using: &random)
            }
            if count > 0, Int.random(in: 0..<8, using: &random) == 0 { text.append(UInt8(ascii: ",")) }
            space(&text, &random)
            text.append(UInt8(ascii: "}"))
        }
        space(&text, &random)
    }
}
