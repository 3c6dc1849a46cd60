import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes lines to a temporary file next to `path` and moves it into place once complete and on disk, so a failed
/// export or archive never leaves a file that looks whole.
///
/// ``finish()`` flushes the file to disk (`fsync`), puts it in place, and flushes the folder too, so the file's name
/// survives a crash: `audit archive` deletes records from the store only after that. With `replacing: false` an
/// existing file is never replaced, not even one created while the lines were being written (the file is put in place
/// with `link(2)`, which fails when the name exists).
package final class LineFileWriter {
    private let path: String
    private let temporary: String
    private let replacing: Bool
    private let handle: FileHandle
    private var buffer = Data()

    /// Why a file could not be written.
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Starts writing `path`.
    /// - Parameter replacing: Whether an existing file at `path` is replaced (`audit export`) or refused
    ///   (`audit archive`).
    /// - Throws: ``Failure`` when `path` exists and may not be replaced, or the temporary file cannot be created.
    package init(path: String, replacing: Bool = true) throws {
        if !replacing, FileManager.default.fileExists(atPath: path) {
            throw Failure(description: "\(path) already exists (it is never overwritten)")
        }
        self.path = path
        self.replacing = replacing
        self.temporary = path + ".partial-\(getpid())"
        guard FileManager.default.createFile(atPath: temporary, contents: nil),
            let handle = FileHandle(forWritingAtPath: temporary)
        else {
            throw Failure(description: "cannot create \(temporary)")
        }
        self.handle = handle
    }

    /// Appends `line` and a line break.
    package func write(_ line: String) throws {
        buffer.append(contentsOf: line.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered, flushes the file to disk and puts it in place.
    package func finish() throws {
        try flush()
        try handle.synchronize()
        try handle.close()
        if replacing {
            guard rename(temporary, path) == 0 else {
                throw Failure(description: "cannot move \(temporary) to \(path): \(String(cString: strerror(errno)))")
            }
        } else {
            guard link(temporary, path) == 0 else {
                let reason =
                    errno == EEXIST ? "it already exists (it is never overwritten)" : String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: temporary)
                throw Failure(description: "cannot create \(path): \(reason)")
            }
            try? FileManager.default.removeItem(atPath: temporary)
        }
        Self.synchronizeFolder(of: path)
    }

    /// Removes the temporary file.
    package func abandon() {
        try? handle.close()
        try? FileManager.default.removeItem(atPath: temporary)
    }

    /// Flushes the folder holding `path`, so that a new name in it is on disk; best effort (some file systems refuse).
    private static func synchronizeFolder(of path: String) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let descriptor = open(folder, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        _ = close(descriptor)
    }
}
