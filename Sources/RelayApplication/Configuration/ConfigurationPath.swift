internal import Foundation

/// Paths in the configuration resolve against the configuration file's folder, not the working directory.
enum ConfigurationPath {
    /// `path` made absolute against `directory` (itself made absolute against the working directory), with `.` and
    /// `..` components removed. Symbolic links are kept as written.
    static func resolve(_ path: String, against directory: String) -> String {
        let base = URL(fileURLWithPath: directory, isDirectory: true)
        return URL(fileURLWithPath: path, relativeTo: base).standardizedFileURL.path
    }
}
