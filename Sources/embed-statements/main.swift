// Writes a Swift file holding every statement of a target's SQL folder as
// `Statements.<Area>.<name>`. Usage: embed-statements OUTPUT.swift FOLDER
//
// FOLDER/<Area>/<name>.sql is one statement. Its leading `--` lines are its documentation:
// they become the constant's `///` comment and are not sent to the server. In the text,
// `{{Area.name}}` is replaced by that (placeholder-free) file's text here, at build time, and
// `{{name}}` makes the statement a function with a `name: String` parameter whose value the
// caller gives: the one way a statement is assembled at run time, named where it happens.
import Foundation

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("embed-statements: \(message)\n".utf8))
    exit(1)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: embed-statements OUTPUT.swift FOLDER\n".utf8))
    exit(2)
}
let output = arguments[0]
let folder = URL(fileURLWithPath: arguments[1])

/// One `.sql` file: its area, name, documentation and text.
struct Statement {
    let area: String
    let name: String
    let doc: [String]
    var text: String
}

func isIdentifier(_ word: String, upper: Bool) -> Bool {
    guard let first = word.first, first.isLetter, upper == first.isUppercase else { return false }
    return word.allSatisfy { $0.isLetter || $0.isNumber }
}

// The folder is listed when the command runs: a file added since is embedded by the next build.
let areas = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
var statements: [Statement] = []
for area in areas {
    let areaFolder = folder.appendingPathComponent(area)
    guard isIdentifier(area, upper: true) else { fail("\(areaFolder.path): an area's folder name must be an UpperCamelCase identifier") }
    for file in try FileManager.default.contentsOfDirectory(atPath: areaFolder.path).sorted() where !file.hasPrefix(".") {
        let path = areaFolder.appendingPathComponent(file).path
        guard file.hasSuffix(".sql") else { fail("\(path): only .sql files belong in an area's folder") }
        let name = String(file.dropLast(4))
        guard isIdentifier(name, upper: false) else { fail("\(path): a statement's file name must be a lowerCamelCase identifier") }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let doc = lines.prefix { $0.hasPrefix("--") }.map { $0.dropFirst(2).trimmingCharacters(in: .init(charactersIn: " ")) }
        let text = lines.dropFirst(doc.count).joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !doc.isEmpty else { fail("\(path): start the file with `--` lines saying what the statement does and what $1… are") }
        guard !text.isEmpty else { fail("\(path): no statement after the header") }
        guard !text.contains("\"\"\"#"), !text.contains("\\#") else { fail("\(path): the text may not contain \"\"\"# or \\#") }
        statements.append(Statement(area: area, name: name, doc: doc, text: text))
    }
}

let placeholder = /\{\{([A-Za-z0-9]+(?:\.[A-Za-z0-9]+)?)\}\}/
// Includes first: `{{Area.name}}` is the named file's text, its own includes expanded (a file
// two includes deep is as deep as it goes); an included file may hold no run-time placeholder.
let byName = Dictionary(uniqueKeysWithValues: statements.map { ("\($0.area).\($0.name)", $0.text) })
@MainActor func expand(_ text: String, in file: String, depth: Int = 0) -> String {
    text.replacing(placeholder) { match in
        let key = String(match.1)
        guard key.contains(".") else { return String(match.0) }
        guard let included = byName[key] else { fail("\(file): it includes {{\(key)}}, but there is no file SQL/\(key.replacing(".", with: "/")).sql") }
        guard depth < 2 else { fail("\(file): {{\(key)}} is included three deep; include its text one level up") }
        let expanded = expand(included, in: key.replacing(".", with: "/") + ".sql", depth: depth + 1)
        guard expanded.firstMatch(of: placeholder) == nil else { fail("\(key): an included file may not hold run-time placeholders") }
        return expanded
    }
}
for index in statements.indices {
    statements[index].text = expand(statements[index].text, in: "\(statements[index].area)/\(statements[index].name).sql")
}

var swift = "// Generated from SQL/*/*.sql by the EmbedStatements plugin. Do not edit: edit the .sql files.\n"
swift += "\n/// The module's SQL statements, one per file of its `SQL/` folder.\nenum Statements {\n"
for area in Dictionary(grouping: statements, by: \.area).sorted(by: { $0.key < $1.key }) {
    swift += "    /// The statements of `SQL/\(area.key)/`.\n    enum \(area.key) {\n"
    for statement in area.value {
        let parameters = statement.text.matches(of: placeholder).map { String($0.1) }.reduce(into: [String]()) { found, name in
            if !found.contains(name) { found.append(name) }
        }
        for line in statement.doc { swift += "        ///\(line.isEmpty ? "" : " " + line)\n" }
        if parameters.isEmpty {
            swift += "        static let \(statement.name) = #\"\"\"\n\(statement.text)\n\"\"\"#\n"
        } else {
            let filled = statement.text.replacing(placeholder) { "\\#(\($0.1))" }
            let list = parameters.map { "\($0): String" }.joined(separator: ", ")
            swift += "        static func \(statement.name)(\(list)) -> String {\n            #\"\"\"\n\(filled)\n\"\"\"#\n        }\n"
        }
    }
    swift += "    }\n"
}
swift += "\n    /// Every statement by its file's name (`Area/name`), its run-time placeholders (`{{name}}`) as written.\n"
swift += "    static let all: [(name: String, sql: String)] = [\n"
for statement in statements {
    swift += "        (\"\(statement.area)/\(statement.name)\", #\"\"\"\n\(statement.text)\n\"\"\"#),\n"
}
swift += "    ]\n}\n"
try swift.write(toFile: output, atomically: true, encoding: .utf8)
