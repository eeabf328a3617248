import Foundation

/// The SQL string literals of HaulQueue's sources, each with the file and function it is in,
/// so that tests can read every statement's guard from its text. An interpolation of a
/// constant of the same file (`\(held)`, `\(Self.neverStarted)`) is replaced by its text.
struct SourceStatement {
    let file: String
    let function: String
    let text: String

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/HaulQueue")

    /// Every string literal of every file of HaulQueue, in order.
    static func all() throws -> [SourceStatement] {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        return try files.flatMap { file in
            let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            let literals = Self.literals(in: source)
            var constants: [String: String] = [:]
            for (start, text) in literals {
                let before = source[..<start]
                if let name = before.range(of: #"let (\w+) =\s*$"#, options: .regularExpression).map({ String(before[$0]) }) {
                    constants[name.split(separator: " ")[1].description] = text
                }
            }
            return literals.map { start, text in
                let functions = source[..<start].matches(of: /func (\w+)/)
                let function = functions.last.map { String($0.1) } ?? ""
                var resolved = text
                for (name, value) in constants {
                    resolved = resolved.replacingOccurrences(of: "\\(\(name))", with: value)
                    resolved = resolved.replacingOccurrences(of: "\\(Self.\(name))", with: value)
                }
                return SourceStatement(file: file, function: function, text: resolved)
            }
        }
    }

    /// The string literals of `source` (`"…"` and `"""…"""`), where each starts, interpolations kept as written.
    static func literals(in source: String) -> [(String.Index, String)] {
        var found: [(String.Index, String)] = []
        var index = source.startIndex
        while index < source.endIndex {
            let rest = source[index...]
            if rest.hasPrefix("//") {
                index = rest.firstIndex(of: "\n") ?? source.endIndex
            } else if rest.hasPrefix("\"\"\"") {
                let body = source.index(index, offsetBy: 3)
                let end = source[body...].range(of: "\"\"\"")?.lowerBound ?? source.endIndex
                found.append((index, String(source[body..<end])))
                index = end == source.endIndex ? end : source.index(end, offsetBy: 3)
            } else if rest.hasPrefix("\"") {
                let (end, text) = singleLine(source, from: source.index(after: index))
                found.append((index, text))
                index = end
            } else {
                index = source.index(after: index)
            }
        }
        return found
    }

    /// A one-line literal's text from `start` (after its opening quote), skipping quotes inside `\( … )`.
    private static func singleLine(_ source: String, from start: String.Index) -> (String.Index, String) {
        var index = start
        var depth = 0
        var inner = false
        while index < source.endIndex {
            let character = source[index]
            if depth == 0 && character == "\\" && source.index(after: index) < source.endIndex {
                if source[source.index(after: index)] == "(" { depth = 1 }
                index = source.index(index, offsetBy: 2)
                continue
            }
            if depth > 0 {
                if character == "\"" { inner.toggle() }
                if !inner && character == "(" { depth += 1 }
                if !inner && character == ")" { depth -= 1 }
            } else if character == "\"" || character == "\n" {
                return (source.index(after: index), String(source[start..<index]))
            }
            index = source.index(after: index)
        }
        return (index, String(source[start..<index]))
    }
}
