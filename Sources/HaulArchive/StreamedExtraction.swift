import Glibc
import HaulCore

extension Extractor {
    /// How the archive of `extract(stream:…)` was read.
    public enum Reading: Sendable, Equatable {
        /// Extracted as it streamed in (tar, tar.gz, gz).
        case streamed
        /// Copied to the spool file first (zip, whose central directory is at its end, or content
        /// not recognised from its first 64 KiB), then extracted from there.
        case spooled
    }

    /// Extracts an archive read once, front to back, from `stream` into `sink`, under the rules of
    /// `extract(archive:into:limits:)`. tar, tar.gz and gz are extracted as they stream in, with no
    /// local copy; anything else is first written to `spool`, a new empty file open for reading and
    /// writing (unnamed, so that nobody can swap it; it is closed here).
    ///
    /// - Parameters:
    ///   - name: the archive's name (a lone `.gz` without a stored name is extracted as `name` less `.gz`).
    ///   - size: the archive's size, for the default size limit.
    /// - Throws: what the extraction throws, or what `stream` throws (it must throw, not end, on a failed read).
    public static func extract(
        stream: any ByteSource, name: String, size: Int64, spool: Int32, into sink: any EntrySink, limits: ExtractionLimits = ExtractionLimits()
    ) throws -> (summary: ExtractionSummary, reading: Reading) {
        var prefix = [UInt8](repeating: 0, count: streamPrefix)
        let got = try prefix.withUnsafeMutableBytes { try stream.readFully(into: $0.baseAddress!, count: streamPrefix) }
        prefix.removeLast(streamPrefix - got)
        guard let format = streamableFormat(prefix, complete: got < streamPrefix) else {
            let spooled = "the spooled \(name)"
            do {
                try copy(prefix, stream, to: spool, path: spooled)
            } catch {
                close(spool)
                throw error
            }
            return (try extract(file: InputFile(descriptor: spool, name: spooled), into: sink, limits: limits), .spooled)
        }
        close(spool)
        let resolved = resolve(limits, archiveSize: size, space: (free: Int64.max, total: 0))
        let source = PrefixedSource(prefix, then: stream)
        let summary: ExtractionSummary
        switch format {
        case .tar:
            summary = try TarExtraction(sink: sink, limits: resolved, allowSymlinks: false).run(source, format: .tar)
        case .tarGzip:
            summary = try TarExtraction(sink: sink, limits: resolved, allowSymlinks: false).run(RatioGuard.gzip(source, resolved), format: .tarGzip)
        case .gzip:
            summary = try GzipExtraction.run(header: prefix, source: source, archivePath: name, sink: sink, limits: resolved)
        }
        return (summary, .streamed)
    }

    /// The bytes read before the format is decided.
    static let streamPrefix = 1 << 16

    /// The formats that can be extracted front to back (zip cannot: its directory is at its end).
    enum StreamableFormat: Equatable {
        case tar, tarGzip, gzip
    }

    /// The format of an archive that starts with `prefix` (the whole archive when `complete`), when it can
    /// be extracted front to back; `nil` for zip and for anything the prefix does not settle. Pure.
    static func streamableFormat(_ prefix: [UInt8], complete: Bool) -> StreamableFormat? {
        if prefix.starts(with: [0x1F, 0x8B]) {
            let source = GzipSource(BytesSource(prefix))
            var block = [UInt8](repeating: 0, count: 512)
            guard let got = try? block.withUnsafeMutableBytes({ try source.readFully(into: $0.baseAddress!, count: 512) }) else { return nil }
            if got == 512 { return TarHeader.looksLikeTar(block) ? .tarGzip : .gzip }
            return complete ? .gzip : nil
        }
        if prefix.count >= 512, TarHeader.looksLikeTar(Array(prefix[0..<512])) { return .tar }
        return nil
    }

    /// Writes `prefix` and the rest of `stream` to the empty file `fd`, called `path` in errors.
    private static func copy(_ prefix: [UInt8], _ stream: any ByteSource, to fd: Int32, path: String) throws {
        try prefix.withUnsafeBytes { try writeAll(fd, $0.baseAddress!, $0.count, path: path) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while case let got = try stream.read(into: buffer, count: ioChunkSize), got > 0 {
            try writeAll(fd, buffer, got, path: path)
        }
    }
}

/// Bytes in memory.
final class BytesSource: ByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        let got = min(count, bytes.count - offset)
        guard got > 0 else { return 0 }
        bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + offset, byteCount: got) }
        offset += got
        return got
    }
}

/// Bytes already read from a stream, then the rest of it.
final class PrefixedSource: ByteSource {
    private let prefix: BytesSource
    private let rest: any ByteSource
    private var inPrefix = true

    init(_ prefix: [UInt8], then rest: any ByteSource) {
        self.prefix = BytesSource(prefix)
        self.rest = rest
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) throws -> Int {
        if inPrefix {
            let got = try prefix.read(into: buffer, count: count)
            if got > 0 { return got }
            inPrefix = false
        }
        return try rest.read(into: buffer, count: count)
    }
}
