import Foundation
import HaulCore

/// `haul get URL -o -`: the download goes to a private scratch folder, then to standard output.
enum StandardOutputFile {
    /// A new, private folder under `TMPDIR` to download into; refuses options that need a file on disk.
    static func scratchFolder(_ arguments: Arguments) throws -> String {
        if arguments.has("--extract") || arguments.value("--extract-to") != nil || arguments.value("--upload-to") != nil {
            throw HaulError.usage("-o - writes the file to standard output; it does not go with --extract or --upload-to")
        }
        var template = Array((NSTemporaryDirectory() + "haul-stdout-XXXXXX").utf8CString)
        guard let folder = mkdtemp(&template) else {
            throw HaulError(.io, "cannot create a scratch folder in \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))")
        }
        return String(cString: folder)
    }

    /// Streams the finished file to standard output.
    static func copy(_ path: String) throws {
        guard let input = FileHandle(forReadingAtPath: path) else { throw HaulError(.io, "cannot read the downloaded file \(path)") }
        defer { try? input.close() }
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            try FileHandle.standardOutput.write(contentsOf: chunk)
        }
    }

    /// Removes the scratch folder and everything in it.
    static func remove(_ folder: String) {
        try? FileManager.default.removeItem(atPath: folder)
    }
}
