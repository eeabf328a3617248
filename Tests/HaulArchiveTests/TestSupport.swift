import Foundation
import HaulCore
import Testing

/// A temporary directory removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("haul-archive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func sub(_ name: String) -> String { "\(path)/\(name)" }
}

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

/// A small deterministic random generator (SplitMix64), so failures reproduce.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        for index in stride(from: 0, to: count, by: 8) {
            let value = next()
            for offset in 0..<min(8, count - index) { result[index + offset] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(offset))) }
        }
        return result
    }
}

/// Runs a program to completion; returns its status and standard output.
@discardableResult
func run(_ arguments: [String], in directory: String? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
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
