import Foundation
import Synchronization

@testable import RelayCore
@testable import RelayProviders

/// A clock the test moves by hand: the wall-clock date and a monotonic instant move together.
final class TestClock: Sendable {
    private let current: Mutex<(date: Date, instant: ContinuousClock.Instant)>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex((start, ContinuousClock.now))
    }

    var now: Date { current.withLock { $0.date } }
    var instant: ContinuousClock.Instant { current.withLock { $0.instant } }

    func advance(by seconds: TimeInterval) {
        advance(by: Duration.seconds(seconds))
    }

    func advance(by duration: Duration) {
        current.withLock { current in
            current.date = current.date.addingTimeInterval(duration / .seconds(1))
            current.instant += duration
        }
    }
}

/// Records every wait the sender asks for and returns at once (its environment moves the test clock by it).
///
/// `onSleep`, when given, runs after each wait is recorded, with the number of waits so far: a test switches the
/// upstream's faults there, so that an outage ends after a number of waits rather than at a time.
final class RecordingSleeper: Sendable {
    private let delays = Mutex<[Duration]>([])
    private let onSleep: (@Sendable (Int) -> Void)?

    init(onSleep: (@Sendable (Int) -> Void)? = nil) {
        self.onSleep = onSleep
    }

    var recorded: [Duration] { delays.withLock { $0 } }

    func sleep(_ duration: Duration) async throws {
        let count = delays.withLock { delays in
            delays.append(duration)
            return delays.count
        }
        onSleep?(count)
    }
}

extension SenderEnvironment {
    /// A deterministic environment on the test clock: every wait is recorded and moves the clock forward by its
    /// length at once, so back-offs, deadlines and the circuit breaker run on the clock, not in real time. Jitter
    /// is fixed at `unit`.
    static func test(clock: TestClock, sleeper: RecordingSleeper, unit: Double = 1) -> SenderEnvironment {
        SenderEnvironment(
            now: { clock.now },
            sleep: { duration in
                clock.advance(by: duration)
                try await sleeper.sleep(duration)
            },
            random: { unit },
            instant: { clock.instant }
        )
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
