import Foundation
import RelayCore

// libFuzzer targets for the readers that take bytes from outside: the JSON reader, the push request parser and the
// audit export reader. Built only by scripts/fuzz.sh (`swift build -Xswiftc -sanitize=fuzzer,address`, with
// RELAY_FUZZ=1 so that Package.swift declares this target), and run by libFuzzer's driver (Fuzz/CRelayFuzzMain); the
// reader is chosen by RELAY_FUZZ_TARGET (`json`, `push-request`, `audit-export`). Each run must return normally
// whatever the bytes: a crash, a trap or an address-sanitizer report is a finding.

/// The reader under test, read once from the environment.
private let target: String = ProcessInfo.processInfo.environment["RELAY_FUZZ_TARGET"] ?? "json"

/// A fixed public key for the audit export reader: what matters is reading hostile lines, not whose signature.
private let auditKey = (try? AuditSigningKey(base64: Data(repeating: 7, count: 32).base64EncodedString()))?.publicKey

@_cdecl("LLVMFuzzerTestOneInput")
public func relayFuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = start.map { UnsafeBufferPointer(start: $0, count: count) } ?? UnsafeBufferPointer(start: nil, count: 0)
    switch target {
    case "push-request":
        do {
            let request = try PushRequest.parse(Array(bytes))
            precondition(request.pushes.count <= PushRequest.maxNotifications, "more notifications than allowed")
        } catch {
            precondition(error.issues.count <= ValidationFailure.maximumIssues, "an unbounded list of problems")
        }
    case "audit-export":
        guard let auditKey else { return 0 }
        var verifier = AuditExportVerifier(publicKey: auditKey)
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
            do { try verifier.feed(line: String(line)) } catch { break }
        }
        _ = verifier.finish()
    default:
        // A value read back from its own encoding must be the same value.
        if let value = try? JSONValue.parse(Array(bytes)) {
            let again = try? JSONValue.parse(value.encodedBytes())
            precondition(again == value, "a value that does not survive its own encoding")
        }
    }
    return 0
}
