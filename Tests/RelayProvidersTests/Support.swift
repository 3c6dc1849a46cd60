import Foundation
import Synchronization

@testable import RelayCore
@testable import RelayProviders

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

/// Records every back-off the sender asks for, and returns at once.
final class RecordingSleeper: Sendable {
    private let delays = Mutex<[Duration]>([])

    var recorded: [Duration] { delays.withLock { $0 } }

    func sleep(_ duration: Duration) async throws {
        delays.withLock { $0.append(duration) }
    }
}

extension SenderEnvironment {
    /// A deterministic environment: the test clock, recorded sleeps, and jitter fixed at `unit`.
    static func test(clock: TestClock, sleeper: RecordingSleeper, unit: Double = 1) -> SenderEnvironment {
        SenderEnvironment(now: { clock.now }, sleep: { try await sleeper.sleep($0) }, random: { unit })
    }
}

enum ProviderTestTokens {
    static func apns(_ code: String = "") -> String {
        let hex = code + String(repeating: "ab", count: 32)
        return String(hex.prefix(64))
    }

    static func fcm(_ code: String = "") -> String {
        code + "fcm:" + String(repeating: "Zx9_", count: 30)
    }

    static func expo(_ code: String = "") -> String {
        "ExponentPushToken[\(code)demo\(code.isEmpty ? "ok" : "x")]"
    }
}

/// Validates a message that must be valid, for the senders.
func resolved(_ message: PushMessage) throws -> [ResolvedPush] {
    var issues: [ValidationIssue] = []
    guard let validated = message.validated(at: .root, issues: &issues) else {
        throw ValidationFailure(issues: issues)
    }
    return validated.pushes
}
