internal import Foundation
internal import Synchronization

#if canImport(Glibc)
internal import Glibc
#endif

/// A `pushrelay serve` child process, its log read line by line: the relay as the tests that kill it
/// (`CrashRecoveryProcessTests`) and the benchmarks (`relay-bench relay`, `relay-bench faults`) run it.
///
/// It lives beside the simulator because both kinds of caller run the two together: the simulator in their own
/// process, the relay as a real process against it, so that signals (`kill -9`) and restarts are real. It starts an
/// executable and reads its standard error; it knows nothing of the relay's code.
package final class RelayProcess: Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(_ description: String) { self.description = description }
    }

    /// The `pushrelay` built beside the running executable (a test bundle's or `relay-bench`), if there is one.
    package static var executableBesideThisOne: String? {
        let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let candidate = running.deletingLastPathComponent().appendingPathComponent("pushrelay").path
        return FileManager.default.isExecutableFile(atPath: candidate) ? candidate : nil
    }

    /// A port on loopback that nothing listens on now.
    package static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure("no socket") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(descriptor, generic, length) == 0 && getsockname(descriptor, generic, &length) == 0
            }
        }
        guard bound else { throw Failure("cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// How many of the last log lines are kept for ``recentLog()`` once the process is listening.
    private static let keptLines = 200

    private let process: Process
    private let lines: AsyncStream<String>
    private let exited: AsyncStream<Int32>
    private let recent = Mutex<[String]>([])

    /// Starts `executable serve --config config`, with the `PUSHRELAY_*` variables of this process removed (the
    /// configuration file alone decides) and text logs.
    ///
    /// - Parameter logLevel: `[logging] level` for this run (`PUSHRELAY_LOGGING_LEVEL`); ``waitUntilListening()``
    ///   needs `info` or lower, the level of the line it waits for.
    package init(executable: String, config: String, logLevel: String = "info") throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["serve", "--config", config]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHRELAY_") }
        environment["PUSHRELAY_LOGGING_FORMAT"] = "text"
        environment["PUSHRELAY_LOGGING_LEVEL"] = logLevel
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        // The newest lines only: a relay logging at `info` for minutes must not grow this process's memory.
        let (lines, lineContinuation) = AsyncStream.makeStream(
            of: String.self, bufferingPolicy: .bufferingNewest(Self.keptLines))
        let (exited, exitContinuation) = AsyncStream.makeStream(of: Int32.self)
        self.process = process
        self.lines = lines
        self.exited = exited
        // The log is read on a thread of its own with blocking read(2) until the pipe's end (the process's exit),
        // not through `FileHandle.readabilityHandler`: swift-corelibs-foundation's dispatch source behind it crashed
        // relay-bench (SIGSEGV in `_dispatch_event_loop_drain` beside `FileHandle.monitor(forReading:)`, 1 run in
        // about 15) when the handler cleared itself at the end of the pipe. The thread holds this object until then.
        let descriptor = errors.fileHandleForReading.fileDescriptor
        let reader = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 16_384)
            var pending: [UInt8] = []
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                pending += chunk[..<count]
                var complete: [String] = []
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    complete.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
                recent.withLock { recent in
                    recent += complete
                    if recent.count > Self.keptLines { recent.removeFirst(recent.count - Self.keptLines) }
                }
                for line in complete { lineContinuation.yield(line) }
            }
            // The descriptor stays the pipe's: its file handle closes it (closing it here too could close another
            // file that took its number).
            lineContinuation.finish()
        }
        reader.name = "relay-process-log"
        process.terminationHandler = { finished in
            exitContinuation.yield(finished.terminationStatus)
            exitContinuation.finish()
        }
        try process.run()
        reader.start()
    }

    /// The process id.
    package var pid: Int32 { process.processIdentifier }

    /// Whether the process is still running.
    package var isRunning: Bool { process.isRunning }

    /// Returns once the log says the listener is bound; throws with the log when the process ends first.
    package func waitUntilListening() async throws {
        // "PushRelay listening" is the start line of builds before 2026-11-25, which `relay-bench` still runs.
        for await line in lines where line.contains("PushRelay started") || line.contains("PushRelay listening") {
            return
        }
        throw Failure("pushrelay serve ended before listening:\n" + recentLog())
    }

    /// The last lines the process logged (at most 200).
    package func recentLog() -> String {
        recent.withLock { $0.joined(separator: "\n") }
    }

    /// Sends `signal` to the process if it is still running.
    package func kill(_ signal: Int32) {
        if process.isRunning { Glibc.kill(process.processIdentifier, signal) }
    }

    /// The exit status, or the signal that ended the process.
    package func exitStatus() async -> Int32 {
        for await status in exited { return status }
        return process.terminationStatus
    }
}
