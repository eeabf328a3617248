/// "Did you mean …?": the nearest known word to a mistyped command or flag.
enum Suggestion {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a typo
    /// (at most a third of the word's length, and at least 1) or `word` is a prefix of exactly one.
    static func nearest(to word: String, among candidates: [String]) -> String? {
        let prefixed = candidates.filter { $0.hasPrefix(word) }
        if word.count >= 2, prefixed.count == 1 { return prefixed[0] }
        let scored = candidates.map { (candidate: $0, distance: distance(word, $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }) else { return nil }
        return best.distance <= max(1, word.count / 3) ? best.candidate : nil
    }

    /// ` (did you mean 'get'?)`, or nothing.
    static func hint(for word: String, among candidates: [String]) -> String {
        nearest(to: word, among: candidates).map { "did you mean '\($0)'?" } ?? ""
    }

    /// Levenshtein distance, with an adjacent transposition counting as one edit.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
