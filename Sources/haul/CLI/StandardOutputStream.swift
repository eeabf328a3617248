import Foundation
import HaulCore
import HaulHTTP
import HaulQueue

/// `haul get URL -o -`: the file written to standard output in order from byte 0 as it
/// arrives, with nothing on disk and no database. Several connections fetch it when the origin
/// serves ranges (`StreamFetch`), the segments ahead held in a reorder buffer of at most
/// `StreamPlan.bufferLimit` bytes; connections ahead wait while it is full. A broken connection
/// resumes from its next byte, pinned with `If-Range`, so another version of the file is never
/// joined to what was sent. Standard output carries only the file's bytes.
struct StandardOutputStream {
    /// The connections' settings (`-x`, `--limit-rate`, `--stall-timeout`, the transfer).
    let settings: StreamFetch.Settings

    /// Refuses, before anything is fetched, the options a stream cannot honour.
    static func refuse(_ arguments: Arguments, urls: Int, metalinkFiles: Int) throws {
        func refusal(_ what: String, _ hint: String) -> HaulError {
            HaulError.usage("-o - writes one file to standard output as it arrives; \(what)", hint: hint)
        }
        if urls > 1 || arguments.value("--input-file") != nil || metalinkFiles > 1 {
            throw refusal("it takes one URL (no -i, no Metalink of several files)", "give one URL, or -o DIR/ for several")
        }
        if arguments.has("--json") { throw refusal("--json would mix with the file's bytes", "drop --json, or give -o FILE") }
        if arguments.has("--extract") || arguments.value("--extract-to") != nil || arguments.value("--upload-to") != nil {
            throw refusal("--extract and --upload-to need the whole file on disk", "give -o FILE or -o DIR/")
        }
        if arguments.has("--timestamping") {
            throw refusal("-N compares with a file saved before, and standard output keeps none", "give -o a path or s3:// URL, or drop -N")
        }
        if !arguments.all("--mirror").isEmpty {
            throw refusal("it reads one origin in order, so --mirror has nothing to spread", "drop --mirror, or give -o FILE")
        }
    }

    /// Streams the file; returns the exit status (0 also when the reader closed the pipe early,
    /// as `haul get URL -o - | head -c 100` does).
    /// - Throws: the error that ended the stream (its code gives the exit status); a checksum
    ///   mismatch once every byte was sent (the bytes cannot be taken back: exit 10).
    func run() throws -> Int32 {
        let fetch = StreamFetch(settings)
        defer { fetch.stop() }
        let digester = settings.transfer.checksum.map { Digester($0.algorithm) }
        var written: Int64 = 0
        var bar = settings.quiet ? nil : ProgressBar(terminal: Output.stderrIsTerminal)
        var lastDrawn = Date.distantPast
        // A line drawn on a terminal is ended before haul exits, whatever ends the stream.
        defer { if lastDrawn != .distantPast { bar?.finish() } }
        fetch.start()
        do {
            while let chunk = try fetch.next() {
                try chunk.withUnsafeBytes { bytes in
                    try Self.write(bytes)
                    digester?.update(bytes)
                }
                written += Int64(chunk.count)
                if bar != nil, Date().timeIntervalSince(lastDrawn) >= 0.2 {
                    bar?.update(bytes: written, size: fetch.size, segments: "", state: "streaming")
                    lastDrawn = Date()
                }
            }
        } catch is ReaderGone {
            // The reader took what it wanted (`head -c 100`): a normal end, nothing to say.
            return ExitCode.success
        }
        if lastDrawn != .distantPast { bar?.update(bytes: written, size: fetch.size, segments: "", state: "done") }
        if let expected = settings.transfer.checksum, let computed = digester?.finish(), computed != expected {
            throw HaulError(
                .checksumMismatch,
                "checksum mismatch: the \(written) bytes written to standard output have \(computed), not \(expected)",
                hint: "the reader has them already: discard its result")
        }
        return ExitCode.success
    }

    /// Writes every byte to standard output.
    /// - Throws: `ReaderGone` when the reader closed the pipe; an `io` error for any other failure.
    private static func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let done = Foundation.write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
            if done < 0 && errno == EINTR { continue }
            if done < 0 && errno == EPIPE { throw ReaderGone() }
            guard done > 0 else {
                throw HaulError(
                    .io, "cannot write the file to standard output: \(String(cString: strerror(errno)))",
                    hint: "make room where standard output goes, or give -o FILE")
            }
            offset += done
        }
    }

    /// Standard output's reader is gone.
    private struct ReaderGone: Error {}
}
