// Writes a Swift file holding each migration's version, name and SQL.
// Usage: embed-migrations OUTPUT.swift 0001_name.sql ...
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: embed-migrations OUTPUT.swift FILE.sql...\n".utf8))
    exit(2)
}
var swift = "// Generated from migrations/*.sql by the EmbedMigrations plugin. Do not edit.\n"
swift += "extension Migrations {\n    static let embedded: [Migration] = [\n"
for path in arguments.dropFirst() {
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
