import Foundation

/// A small tmpfs for one scenario's SQLite store, which the scenario fills up and frees again: a full disk under the
/// relay without touching any real filesystem.
///
/// Where `mount` works (root, as in CI) the tmpfs is mounted on the store's folder for everyone. Elsewhere, where the
/// kernel lets users make namespaces (Debian's default), the relay runs in a user and mount namespace of its own
/// (``launcher``: `unshare --user --map-root-user --mount`), which mounts the tmpfs over the store's folder after
/// copying what the folder holds (the tenant and its key) onto it; the benchmark reaches that tmpfs through
/// `/proc/<relay>/root`, and it vanishes with the relay. Without either, ``prepare(at:megabytes:pushrelay:)`` throws
/// ``Unavailable`` and the scenario is skipped, saying why.
struct FaultFilesystem {
    /// Why no tmpfs can be had (`mount`'s and `unshare`'s own messages).
    struct Unavailable: Error {
        var reason: String
    }

    /// The store's folder, as the relay sees it.
    let path: String
    /// The program to start `pushrelay serve` with, when the tmpfs lives in the relay's own namespace; `nil` when it
    /// is mounted for everyone.
    let launcher: String?

    /// Mounts a tmpfs of `megabytes` at `path` (made if missing), or prepares ``launcher`` to mount one there in the
    /// relay's own namespace.
    ///
    /// - Throws: ``Unavailable`` when neither works.
    static func prepare(at path: String, megabytes: Int, pushrelay: String) throws -> FaultFilesystem {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let options = "size=\(megabytes)m,mode=0700"
        let (status, output) = try Self.run(["mount", "-t", "tmpfs", "-o", options, "relay-bench-faults", path])
        if status == 0 { return FaultFilesystem(path: path, launcher: nil) }
        // The same mount in a namespace of its own, which ends with `unshare` and leaves nothing behind.
        let namespace = ["unshare", "--user", "--map-root-user", "--mount"]
        let (probeStatus, probeOutput) = try Self.run(
            namespace + ["mount", "-t", "tmpfs", "-o", options, "relay-bench-faults", path])
        guard probeStatus == 0 else {
            throw Unavailable(
                reason: "mount: \(output.isEmpty ? "status \(status)" : output); in a user namespace: "
                    + (probeOutput.isEmpty ? "status \(probeStatus)" : probeOutput))
        }
        let launcher = path + ".serve"
        let seed = path + ".seed"
        // $0 is the store's folder, the rest `serve --config …`.
        let script = """
            #!/bin/sh
            # relay-bench faults: pushrelay in a user and mount namespace, on a tmpfs over its store's folder.
            exec \(namespace.joined(separator: " ")) /bin/sh -c '
                set -e
                mkdir -p "\(seed)"
                cp -a "$0/." "\(seed)/"
                mount -t tmpfs -o \(options) relay-bench-faults "$0"
                cp -a "\(seed)/." "$0/"
                exec "\(pushrelay)" "$@"
            ' "\(path)" "$@"

            """
        try script.write(toFile: launcher, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: launcher)
        return FaultFilesystem(path: path, launcher: launcher)
    }

    /// Unmounts a tmpfs mounted for everyone (lazily, so that a process still holding a file cannot keep it mounted).
    func unmount() {
        guard launcher == nil else { return }
        _ = try? Self.run(["umount", "--lazy", path])
    }

    /// Fills the filesystem for `duration`, topping it up every 100 ms (whatever the store frees, a WAL file
    /// truncated say, is taken again at once), then frees the space. Returns how much the filler took.
    ///
    /// - Parameter relay: The relay's process id, through whose root a namespaced tmpfs is reached.
    func keepFull(for duration: Duration, relay: Int32) async -> Int {
        let folder = launcher == nil ? path : "/proc/\(relay)/root" + path
        let filler = folder + "/filler"
        let clock = ContinuousClock()
        let end = clock.now + duration
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else { return 0 }
        var written = 0
        while clock.now < end {
            written += Self.fill(descriptor)
            try? await Task.sleep(for: .milliseconds(100))
        }
        close(descriptor)
        unlink(filler)
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
