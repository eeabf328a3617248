import Foundation

/// A temporary directory for one test, removed when released.
final class TemporaryDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "haul-upload-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// Writes `size` bytes of pseudo-random data, every MiB different, to `name`; returns the path.
    func makeFile(_ name: String, size: Int) throws -> String {
        let file = path + "/" + name
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        defer { try? handle.close() }
        var block = [UInt8](repeating: 0, count: 1 << 20)
        var generator = SystemRandomNumberGenerator()
        for index in block.indices { block[index] = generator.next() }
        var written = 0
        while written < size {
            withUnsafeBytes(of: UInt64(written).littleEndian) { block.replaceSubrange(0..<8, with: $0) }
            let count = min(block.count, size - written)
            try handle.write(contentsOf: block[0..<count])
            written += count
        }
        return file
    }

    /// Writes `text` to `name`; returns the path.
    func makeFile(_ name: String, text: String) throws -> String {
        let file = path + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}

/// The SHA-256 of a file as lower-case hex, computed by coreutils' `sha256sum` reading stdin
/// (given a name with a backslash, it would prefix its output with one).
func sha256(ofFile path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(String(decoding: data, as: UTF8.self).prefix(64))
}

/// A value closures on the uploading thread update and the test reads afterwards.
final class Box<Value> {
    var value: Value
    init(_ value: Value) { self.value = value }
}
