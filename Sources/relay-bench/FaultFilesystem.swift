import Foundation

/// A small tmpfs mounted for one scenario's SQLite store, which the scenario fills up and frees again: a full disk
/// under the relay without touching any real filesystem.
///
/// Mounting needs `CAP_SYS_ADMIN` (root, as in CI); without it ``mount(at:megabytes:)`` throws ``Unavailable`` and
/// the scenario is skipped, saying why.
struct FaultFilesystem {
    /// Why no tmpfs could be mounted (`mount`'s own message).
    struct Unavailable: Error {
        var reason: String
    }

    /// The mount point.
    let path: String
    private var fillerPath: String { path + "/filler" }

    /// Mounts a tmpfs of `megabytes` at `path` (made if missing), readable by its owner only.
    ///
    /// - Throws: ``Unavailable`` when `mount` fails (not root, or no tmpfs).
    static func mount(at path: String, megabytes: Int) throws -> FaultFilesystem {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let (status, output) = try Self.run(
            ["mount", "-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "relay-bench-faults", path])
        guard status == 0 else {
            throw Unavailable(reason: output.isEmpty ? "mount exited with status \(status)" : output)
        }
        return FaultFilesystem(path: path)
    }

    /// Unmounts it (lazily, so that a process still holding a file cannot keep it mounted).
    func unmount() {
        _ = try? Self.run(["umount", "--lazy", path])
    }

    /// Fills the filesystem for `duration`, topping it up every 100 ms (whatever the store frees, a WAL file
    /// truncated say, is taken again at once), then frees the space. Returns the largest size the filler reached.
    func keepFull(for duration: Duration) async -> Int {
        let clock = ContinuousClock()
        let end = clock.now + duration
        let descriptor = open(fillerPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else { return 0 }
        var written = 0
        while clock.now < end {
            written += Self.fill(descriptor)
            try? await Task.sleep(for: .milliseconds(100))
        }
        close(descriptor)
        unlink(fillerPath)
        return written
    }

    /// Appends to `descriptor` until the filesystem has no block left: 1 MiB writes, then single pages.
    private static func fill(_ descriptor: Int32) -> Int {
        var written = 0
        for size in [1 << 20, 4096] {
            let chunk = [UInt8](repeating: 0xfa, count: size)
            while true {
                let count = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, size) }
                guard count > 0 else { break }
                written += count
            }
        }
        return written
    }

    /// Runs a system tool (found on `PATH`) and returns its exit status and its output (stdout and stderr).
    private static func run(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return (process.terminationStatus, text)
    }
}
