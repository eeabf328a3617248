import Glibc
import HaulCore

/// Extracts a single gzip file (all members concatenated) as one file in the sink.
enum GzipExtraction {
    static func run(_ file: InputFile, sink: any EntrySink, limits: Limits) throws -> ExtractionSummary {
        let header = try file.bytes(Int(min(file.size, 1 << 16)), at: 0, what: "the gzip header")
        return try run(header: header, source: FileSource(file), archivePath: file.path, sink: sink, limits: limits)
    }

    /// Extracts the gzip data of `source`, whose first bytes (up to 64 KiB) are `header`.
    static func run(header: [UInt8], source input: any ByteSource, archivePath: String, sink: any EntrySink, limits: Limits) throws
        -> ExtractionSummary
    {
        let name = outputName(header: header, archivePath: archivePath)
        let mtime = header.count >= 8 ? Int64(header[4]) | Int64(header[5]) << 8 | Int64(header[6]) << 16 | Int64(header[7]) << 24 : 0
        let output = try sink.createFile(name, sizeBound: limits.maxSize, executable: false, modificationTime: mtime > 0 ? mtime : Int64(time(nil)))
        var summary = ExtractionSummary(format: .gzip)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
        defer { buffer.deallocate() }
        do {
            let source = RatioGuard.gzip(input, limits)
            while case let got = try source.read(into: buffer, count: ioChunkSize), got > 0 {
                summary.bytes += Int64(got)
                if summary.bytes > limits.maxSize { throw ZipCatalog.tooLarge(declared: UInt64(summary.bytes), overflow: false, limits) }
                try output.write(UnsafeRawBufferPointer(start: buffer, count: got), at: summary.bytes - Int64(got))
            }
        } catch {
            output.abort()
            throw error
        }
        try output.finish(size: summary.bytes)
        summary.files = 1
        return summary
    }

    /// The base name stored in the gzip header (FNAME), else the archive's name without `.gz`, else `data`.
    static func outputName(header: [UInt8], archivePath: String) -> String {
        if let stored = storedName(header), let safe = safeBaseName(stored) { return safe }
        let name = String(archivePath.lastSlashComponent ?? "")
        let base = [".gz", ".gzip", ".z"].lazy.compactMap { name.droppingASCIISuffix($0) }.first.map(String.init) ?? name
        return safeBaseName(base) ?? "data"
    }

    private static func storedName(_ header: [UInt8]) -> String? {
        guard header.count > 10, header[3] & 0x08 != 0 else { return nil }
        var index = 10
        if header[3] & 0x04 != 0 {
            guard header.count > 12 else { return nil }
            index += 2 + (Int(header[10]) | Int(header[11]) << 8)
        }
        guard index < header.count, let end = header[index...].firstIndex(of: 0) else { return nil }
        return TarHeader.decodeName(Array(header[index..<end]))
    }

    private static func safeBaseName(_ name: String) -> String? {
        guard let base = name.lastSlashComponent.map(String.init),
            let normalized = try? EntryPath.normalize(base), !normalized.containsSlash
        else { return nil }
        return normalized
    }
}
