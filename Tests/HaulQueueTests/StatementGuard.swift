import Foundation

/// What one `UPDATE` of `transfers` or `segments` says about states, read from its text: the
/// states it may write (none when it leaves the state alone), and the states its guard allows.
struct StatementGuard {
    /// `transfers` or `segments`.
    let table: String
    /// The states the statement may write (the literals of its `state = …` assignment, outside
    /// `WHEN … THEN` conditions); empty when it sets no state.
    let targets: Set<String>
    /// The states its guard allows (`state = 'x'`, `state IN (…)`, `state <> 'x'`, the
    /// `WHEN state = …` of a conditional assignment), or nil when it compares no state.
    let from: Set<String>?

    /// Reads `sql`, or nil when it is no update of either table. `states` are each table's
    /// states (for `<>` and `NOT IN`).
    init?(_ sql: String, states: [String: Set<String>]) {
        let text = Self.flat(sql)
        guard let update = Self.first(#"UPDATE (transfers|segments)(?: (\w+))? SET "#, in: text),
            let table = update[1], let all = states[table]
        else { return nil }
        let alias = update[2].flatMap { $0 == "SET" ? nil : $0 }
        let other = table == "transfers" ? "segments" : "transfers"
        let setStart = text.range(of: update[0]!)!.upperBound
        let items = Self.topLevelItems(String(text[setStart...]))
        let assignment = items.first(where: { $0.hasPrefix("state = ") }) ?? ""
        self.table = table
        let conditions = Self.all(#"WHEN (.*?) THEN"#, in: assignment).compactMap { $0[1] }
        let values = assignment.replacingOccurrences(of: #"WHEN .*? THEN"#, with: " ", options: .regularExpression)
        targets = Set(Self.all(#"'(\w+)'"#, in: values).compactMap { $0[1] }).intersection(all)
        // The guard: the rest of the statement with the subqueries over the other table left out,
        // and the assignment's conditions.
        let rest = Self.withoutSubqueries(
            over: other, in: assignment.isEmpty ? text : text.replacingOccurrences(of: assignment, with: conditions.joined(separator: " AND ")))
        let own = alias.map { "(?:\($0)\\.)?" } ?? ""
        var allowed: Set<String>?
        for match in Self.all(#"(?<![\w.])\#(own)state\s*(=|<>|IN|NOT IN)\s*('\w+'|\([^)]*\))"#, in: rest) {
            let named = Set(Self.all(#"'(\w+)'"#, in: match[2]!).compactMap { $0[1] })
            let states = match[1] == "=" || match[1] == "IN" ? named : all.subtracting(named)
            allowed = (allowed ?? []).union(states)
        }
        from = allowed
    }

    /// The text on one line, without `--` comments, with single spaces.
    static func flat(_ sql: String) -> String {
        let lines = sql.split(separator: "\n").map { line in line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line) }
        return lines.joined(separator: " ").split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The comma-separated items of a SET clause, up to its `WHERE`, `FROM` or `RETURNING`.
    static func topLevelItems(_ text: String) -> [String] {
        var items: [String] = []
        var current = ""
        var depth = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if depth == 0 && ["WHERE", "FROM", "RETURNING"].contains(word) { break }
            for character in word {
                if character == "(" { depth += 1 }
                if character == ")" { depth -= 1 }
            }
            if depth == 0 && word.hasSuffix(",") {
                current += word.dropLast()
                items.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current += word + " "
            }
        }
        items.append(current.trimmingCharacters(in: .whitespaces))
        return items
    }

    /// `text` without the parenthesized `SELECT`s whose first `FROM` is `table`.
    static func withoutSubqueries(over table: String, in text: String) -> String {
        var text = text
        var searchFrom = text.startIndex
        while let open = text.range(of: "(SELECT ", range: searchFrom..<text.endIndex) {
            var depth = 0
            var close = open.lowerBound
            for index in text.indices[open.lowerBound...] {
                if text[index] == "(" { depth += 1 }
                if text[index] == ")" { depth -= 1 }
                if depth == 0 {
                    close = index
                    break
                }
            }
            let group = String(text[open.lowerBound...close])
            if first(#"FROM (\w+)"#, in: group)?[1] == table {
                text.replaceSubrange(open.lowerBound...close, with: "(…)")
                searchFrom = text.startIndex
            } else {
                searchFrom = open.upperBound
            }
        }
        return text
    }

    static func all(_ pattern: String, in text: String) -> [[String?]] {
        let expression = try! NSRegularExpression(pattern: pattern)
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
            (0..<match.numberOfRanges).map { Range(match.range(at: $0), in: text).map { String(text[$0]) } }
        }
    }

    static func first(_ pattern: String, in text: String) -> [String?]? { all(pattern, in: text).first }
}
