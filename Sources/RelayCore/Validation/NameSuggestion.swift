/// "Did you mean …" for names that are almost right: field names in requests, keys in the configuration.
package enum NameSuggestion {
    /// The candidate closest to `name` if it is close enough to be a typo: at most `maxDistance` edits (by default
    /// one per three characters, at least one), case ignored; ties go to the alphabetically first.
    package static func closest(to name: String, among candidates: some Sequence<String>, maxDistance: Int? = nil)
        -> String?
    {
        let lowered = name.lowercased()
        let limit = maxDistance ?? max(1, lowered.count / 3)
        var best: (candidate: String, distance: Int)?
        let length = lowered.unicodeScalars.count
        for candidate in candidates.sorted() {
            // The distance is at least the difference in length: a name far longer than every candidate (a hostile
            // key of a megabyte) costs no edit distance at all.
            guard abs(candidate.unicodeScalars.count - length) <= limit else { continue }
            let distance = editDistance(lowered, candidate.lowercased())
            if distance <= limit, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// Levenshtein distance: insertions, deletions and substitutions that turn `a` into `b`.
    package static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
