import Foundation
import HaulCore
import HaulTestSupport

/// Files served by the test nginx: written into its document root with deterministic content.
enum Origin {
    /// Writes `size` pseudo-random bytes (seeded by the name) and returns the file's URL path and sha256.
    @discardableResult
    static func file(_ name: String, size: Int) throws -> (path: String, sha256: String) {
        let path = Harness.docroot + "/" + name
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var generator = SplitMix64(seed: UInt64(truncatingIfNeeded: name.hashValue == 0 ? 1 : abs(name.utf8.reduce(7) { $0 &* 31 &+ Int($1) })))
        var data = Data(count: size)
        data.withUnsafeMutableBytes { buffer in
            let words = buffer.bindMemory(to: UInt8.self)
            var index = 0
            while index < size {
                var value = generator.next()
                for _ in 0..<8 where index < size {
                    words[index] = UInt8(truncatingIfNeeded: value)
                    value >>= 8
                    index += 1
                }
            }
        }
        // A name of this call's own: two tests making one file at once must not write into one temporary file.
        let temporary = path + ".tmp-" + UUID().uuidString
        try data.write(to: URL(fileURLWithPath: temporary))
        chmod(temporary, 0o644)
        rename(temporary, path)
        return ("/" + name, sha256(data))
    }

    /// The sha256 of a file on disk, or nil if it is missing.
    static func sha256(file path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return sha256(data)
    }

    static func sha256(_ data: Data) -> String {
        let digester = Digester(.sha256)
        data.withUnsafeBytes { digester.update($0) }
        return digester.finish().hex
    }

    /// Lines of the nginx access log that mention `path`.
    static func requests(for path: String) -> [String] {
        let log = (try? String(contentsOfFile: Harness.accessLog, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init).filter { $0.contains(" \(path) ") }
    }
}
