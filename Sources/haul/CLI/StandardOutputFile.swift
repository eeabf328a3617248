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
    /// - Throws: an `io` error naming what went wrong: the reader closed the pipe early (as
    ///   `head` does), or the output cannot take the bytes (a full disk).
    static func copy(_ path: String) throws {
        let input = open(path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw HaulError(.io, "cannot read the downloaded file \(path): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw HaulError(.io, "cannot read the downloaded file \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { return }
            var written = 0
            while written < count {
                let done = buffer.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + written, count - written) }
                if done < 0 && errno == EINTR { continue }
                guard done > 0 else { throw outputFailed(errno) }
                written += done
            }
        }
    }

    /// The failure of a write to standard output with `code`.
    static func outputFailed(_ code: Int32) -> HaulError {
        if code == EPIPE {
            return HaulError(
                .io, "standard output was closed before the whole file was written",
                hint: "its reader stopped early; to keep the file, give -o FILE instead of -o -")
        }
        return HaulError(
            .io, "cannot write the file to standard output: \(String(cString: strerror(code)))",
            hint: "make room where standard output goes, or give -o FILE")
    }

    /// Removes the scratch folder and everything in it.
    static func remove(_ folder: String) {
        try? FileManager.default.removeItem(atPath: folder)
    }
}
