import Foundation
import Testing

@testable import HaulQueue

/// The statement files (`Sources/HaulQueue/SQL/<Area>/<name>.sql`) as a reader finds them:
/// each is compiled in whole, and its header says what every parameter and placeholder is.
@Suite("SQL statement files")
struct StatementFilesTests {
    /// Each file as `Area/name`, its header (the leading `--` lines) and its statement.
    static func files() throws -> [(name: String, header: String, body: String)] {
        let folder = SourceStatement.folder.appendingPathComponent("SQL")
        let manager = FileManager.default
        return try manager.contentsOfDirectory(atPath: folder.path).sorted().flatMap { area in
            try manager.contentsOfDirectory(atPath: folder.appendingPathComponent(area).path).sorted().map { file in
                let lines = try String(contentsOf: folder.appendingPathComponent(area).appendingPathComponent(file), encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                let header = lines.prefix { $0.hasPrefix("--") }
                return (
                    "\(area)/\(file.replacingOccurrences(of: ".sql", with: ""))", header.joined(separator: "\n"),
                    lines.dropFirst(header.count).joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
                )
            }
        }
    }

    @Test("every file is compiled in as Statements.<Area>.<name>, its text as written, its includes filled")
    func embedded() throws {
        let files = try Self.files()
        let embedded = Dictionary(uniqueKeysWithValues: Statements.all.map { ($0.name, $0.sql) })
        #expect(files.map(\.name) == Statements.all.map(\.name).sorted())
        for file in files {
            let sql = try #require(embedded[file.name])
            if file.body.contains(/\{\{\w+\.\w+\}\}/) {
                #expect(!sql.contains(/\{\{\w+\.\w+\}\}/), "\(file.name) still holds an include")
            } else {
                #expect(sql == file.body, "\(file.name) is not compiled in as written")
            }
        }
    }

    @Test("each file's header names every $n parameter and {{placeholder}} its statement uses")
    func documented() throws {
        for file in try Self.files() {
            var named = Set(file.header.matches(of: /\$(\d+)/).compactMap { Int($0.1) })
            for range in file.header.matches(of: /\$(\d+)\s*[–-]\s*\$(\d+)/) {
                if let low = Int(range.1), let high = Int(range.2), low <= high { named.formUnion(low...high) }
            }
            let used = Set(file.body.matches(of: /\$(\d+)/).compactMap { Int($0.1) })
            #expect(used.isSubset(of: named), "\(file.name): the header does not say what \(used.subtracting(named).sorted()) are")
            for placeholder in file.body.matches(of: /\{\{(\w+)\}\}/) {
                #expect(file.header.contains("{{\(placeholder.1)}}"), "\(file.name): the header does not say what {{\(placeholder.1)}} is")
            }
        }
    }
}
