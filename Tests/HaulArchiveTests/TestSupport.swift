import Foundation
import HaulCore
import HaulTestSupport
import Testing

/// What a tree holds, for byte-for-byte comparison: every directory (empty ones too), file and symlink.
enum Node: Equatable, CustomStringConvertible {
    case directory
    case file(Data, executable: Bool)
    case symlink(String)

    var description: String {
        switch self {
        case .directory: "dir"
        case .file(let data, let executable): "file(\(data.count) bytes\(executable ? ", +x" : ""))"
        case .symlink(let target): "symlink(\(target))"
        }
    }
}

func snapshot(_ root: String, modes: Bool = true) throws -> [String: Node] {
    var result: [String: Node] = [:]
    let manager = FileManager.default
    for relative in try manager.subpathsOfDirectory(atPath: root) {
        let path = "\(root)/\(relative)"
        let attributes = try manager.attributesOfItem(atPath: path)
        switch attributes[.type] as? FileAttributeType {
        case .typeDirectory?: result[relative] = .directory
        case .typeSymbolicLink?: result[relative] = .symlink(try manager.destinationOfSymbolicLink(atPath: path))
        default:
            let permissions = (attributes[.posixPermissions] as? Int) ?? 0
            result[relative] = .file(try Data(contentsOf: URL(fileURLWithPath: path)), executable: modes && permissions & 0o111 != 0)
        }
    }
    return result
}

/// Writes a tree with nested and empty directories, text and random data, an executable, a non-ASCII name.
func makeSampleTree(at root: String, seed: UInt64 = 42, largeFile: Int = 600_000) throws {
    var rng = SplitMix64(seed: seed)
    let manager = FileManager.default
    for directory in ["docs/deep/er", "empty", "bin", "data", "naïve café", "docs/also-empty"] {
        try manager.createDirectory(atPath: "\(root)/\(directory)", withIntermediateDirectories: true)
    }
    let text = (0..<20_000).map { "line \($0) of some compressible text\n" }.joined()
    try Data(text.utf8).write(to: URL(fileURLWithPath: "\(root)/docs/readme.txt"))
    try Data("tiny".utf8).write(to: URL(fileURLWithPath: "\(root)/docs/deep/er/tiny.txt"))
    try Data(rng.bytes(largeFile)).write(to: URL(fileURLWithPath: "\(root)/data/random.bin"))
    try Data(rng.bytes(1000)).write(to: URL(fileURLWithPath: "\(root)/naïve café/résumé.bin"))
    try Data().write(to: URL(fileURLWithPath: "\(root)/data/empty-file"))
    try Data("#!/bin/sh\necho hi\n".utf8).write(to: URL(fileURLWithPath: "\(root)/bin/run.sh"))
    try manager.setAttributes([.posixPermissions: 0o755], ofItemAtPath: "\(root)/bin/run.sh")
}

/// Runs a program to completion; returns its status and standard output.
@discardableResult
func run(_ arguments: [String], in directory: String? = nil) throws -> (status: Int32, output: String) {
    let result = try Run.program("/usr/bin/env", arguments, directory: directory)
    return (result.status, result.stdout)
}

/// Runs a program and records a test issue when it fails.
func runChecked(_ arguments: [String], in directory: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let result = try run(arguments, in: directory)
    #expect(result.status == 0, "\(arguments.joined(separator: " ")) failed: \(result.output)", sourceLocation: sourceLocation)
}

/// The path of a file under Tests/HaulArchiveTests/Fixtures.
func fixture(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)").path
}

/// The error an extraction threw, as a `HaulError`; records an issue for success or a foreign error.
func extractionError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> HaulError? {
    do {
        try body()
        Issue.record("extraction succeeded but should have been refused", sourceLocation: sourceLocation)
    } catch let error as HaulError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
