// Writes a Swift file holding each migration's version, name and SQL.
// Usage: embed-migrations OUTPUT.swift FOLDER (every FOLDER/*.sql, in name order)
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: embed-migrations OUTPUT.swift FOLDER\n".utf8))
    exit(2)
}
let output = arguments[0]
let folder = URL(fileURLWithPath: arguments[1])
// The folder is listed here, when the command runs, not when the build is planned: a migration
// added since is embedded by the next incremental build (the folder is one of the command's inputs).
let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
    .filter { $0.hasSuffix(".sql") }
    .sorted()
    .map { folder.appendingPathComponent($0).path }
var swift = "// Generated from migrations/*.sql by the EmbedMigrations plugin. Do not edit.\n"
swift += "extension Migrations {\n    static let embedded: [Migration] = [\n"
for path in files {
    let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
    guard let version = Int(name.prefix { $0.isNumber }) else {
        FileHandle.standardError.write(Data("\(path): a migration's name must start with its version number\n".utf8))
        exit(1)
    }
    let sql = try String(contentsOfFile: path, encoding: .utf8)
    swift += "        Migration(version: \(version), name: \"\(name)\", sql: #\"\"\"\n\(sql)\n\"\"\"#),\n"
}
swift += "    ]\n}\n"
try swift.write(toFile: output, atomically: true, encoding: .utf8)
