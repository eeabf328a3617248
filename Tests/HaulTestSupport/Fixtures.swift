import Foundation

/// A test failure with a message.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    /// Creates a failure saying `description`.
    public init(_ description: String) { self.description = description }
}

/// A temporary directory for one test, removed when released.
public final class TemporaryDirectory {
    /// Its absolute path.
    public let path: String

    /// Creates an empty directory under the process's temporary folder.
    public init(_ label: String = "test") throws {
        path = NSTemporaryDirectory() + "haul-\(label)-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of `name` inside it.
    public func sub(_ name: String) -> String { "\(path)/\(name)" }

    /// Writes `size` bytes of pseudo-random data, every MiB different, to `name`; returns the path.
    public func makeFile(_ name: String, size: Int) throws -> String {
        let file = sub(name)
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
    public func makeFile(_ name: String, text: String) throws -> String {
        let file = sub(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }
}

/// A small deterministic random generator (SplitMix64), so failures reproduce from their seed.
public struct SplitMix64: RandomNumberGenerator {
    /// The generator's state; the seed at first.
    public var state: UInt64

    /// Starts from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        for index in stride(from: 0, to: count, by: 8) {
            let value = next()
            for offset in 0..<min(8, count - index) { result[index + offset] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(offset))) }
        }
        return result
    }
}

/// A value closures on another thread update and the test reads afterwards.
public final class Box<Value> {
    /// The value.
    public var value: Value
    /// Holds `value`.
    public init(_ value: Value) { self.value = value }
}
