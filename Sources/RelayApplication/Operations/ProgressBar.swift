/// A one-line text progress bar, for standard error on a terminal:
/// `chain relay-1 [##########..................] 35% 3500/10000`.
package enum ProgressBar {
    /// The bar for `done` of `total`; a zero total shows as complete.
    package static func line(label: String, done: Int, total: Int, width: Int = 30) -> String {
        let total = max(total, done)
        let fraction = total == 0 ? 1.0 : Double(done) / Double(total)
        let filled = min(width, Int((fraction * Double(width)).rounded(.down)))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let percent = Int((fraction * 100).rounded(.down))
        return "\(label) [\(bar)] \(percent)% \(done)/\(total)"
    }
}
