import Glibc
import HaulCore

/// Streams a tar archive (ustar, pax, GNU long names, GNU sparse files) into a sink in one pass.
///
/// Unlike zip there is no directory to validate up front; every rule is enforced as the entry arrives and
/// the sink's owner makes the outcome all-or-nothing. Symlinks are created last.
struct TarExtraction {
    let sink: any EntrySink
    let limits: Limits
    let allowSymlinks: Bool

    func run(_ source: any ByteSource, format: ArchiveFormat) throws -> ExtractionSummary {
        var summary = ExtractionSummary(format: format)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var pax: [String: String] = [:]
        var sparseRecords: [(key: String, value: String)] = []
        var longName: String?
        var longLink: String?
        var seen = Set<String>()
        var symlinks: [(path: String, target: String)] = []
        var entries = 0
        var metadata: Int64 = 0
        // Bytes the sink will hold, for the size limit: `summary.bytes` less the holes a sink keeps.
        var charged: Int64 = 0
        while let header = try nextHeader(source, buffer) {
            if [UInt8(ascii: "x"), UInt8(ascii: "g"), UInt8(ascii: "L"), UInt8(ascii: "K")].contains(header.type) {
                // pax and GNU records before one entry: 1 MiB together, however many headers carry them.
                metadata += header.size
                guard metadata <= TarExtraction.maxMetadata else {
                    throw HaulError.corrupt("the metadata records before one tar entry take more than \(ByteSize.format(TarExtraction.maxMetadata))")
                }
            }
            switch header.type {
            case UInt8(ascii: "x"):
                let records = try TarHeader.parsePaxRecords(try readSmall(source, header.size, buffer))
                pax.merge(records.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
                sparseRecords += records.filter { $0.key.hasPrefix("GNU.sparse.") }
                continue
            case UInt8(ascii: "g"):
                _ = try readSmall(source, header.size, buffer)
                continue
            case UInt8(ascii: "L"):
                longName = TarHeader.decodeName(Array(try readSmall(source, header.size, buffer).prefix { $0 != 0 }))
                continue
            case UInt8(ascii: "K"):
                longLink = TarHeader.decodeName(Array(try readSmall(source, header.size, buffer).prefix { $0 != 0 }))
                continue
            default:
                break
            }
            let name = pax["GNU.sparse.name"] ?? pax["path"] ?? longName ?? header.name
            let target = pax["linkpath"] ?? longLink ?? header.linkName
            let size =
                try pax["size"].map { text in
                    guard let value = Int64(text), value >= 0 else { throw HaulError.corrupt("a pax size record is invalid") }
                    return value
                } ?? header.size
            guard size < 1 << 60 else { throw HaulError.corrupt("a tar entry claims \(size) bytes") }
            let mtime = pax["mtime"].flatMap { Int64($0.prefix { $0 != "." }) } ?? header.modificationTime
            let sparse = try SparseMap.fromPax(sparseRecords)
            (pax, longName, longLink, sparseRecords, metadata) = ([:], nil, nil, [], 0)
            entries += 1
            if entries > limits.maxEntries { throw ZipCatalog.tooManyEntries(UInt64(entries), limits) }
            guard let path = try EntryPath.normalize(name) else {
                guard header.type == UInt8(ascii: "5") else { throw HaulError.unsafeName(name, "names the destination itself but is not a directory") }
                try skip(source, size, buffer)
                continue
            }
            guard seen.insert(path).inserted else {
                throw HaulError(HaulError.Code.duplicateEntry, "refusing archive: entry '\(HaulError.printable(path))' appears twice")
            }
            if header.oldSparse != nil || (sparse != nil && [0, UInt8(ascii: "0"), UInt8(ascii: "7")].contains(header.type)) {
                try extractSparse(path, header: header, pax: sparse, size: size, mtime: mtime, source, buffer, &summary, charged: &charged)
                continue
            }
            switch header.type {
            case 0, UInt8(ascii: "0"), UInt8(ascii: "7"):
                summary.bytes += size
                try charge(size, to: &charged)
                if let parent = EntryPath.ancestors(of: path).last { try sink.makeDirectory(parent, modificationTime: nil) }
                let file = try sink.createFile(path, sizeBound: size, executable: header.mode & 0o111 != 0, modificationTime: mtime)
                do {
                    var offset: Int64 = 0
                    try copy(source, size, buffer) { chunk in
                        try file.write(chunk, at: offset)
                        offset += Int64(chunk.count)
                    }
                } catch {
                    file.abort()
                    throw error
                }
                try file.finish(size: size)
                summary.files += 1
            case UInt8(ascii: "5"):
                try sink.makeDirectory(path, modificationTime: mtime)
                try skip(source, size, buffer)
                summary.directories += 1
            case UInt8(ascii: "2"):
                guard allowSymlinks else {
                    throw HaulError(
                        HaulError.Code.symlinkRefused, "refusing archive: entry '\(HaulError.printable(path))' is a symlink",
                        hint: "pass --allow-symlinks to create symlinks that stay inside the destination")
                }
                symlinks.append((path, target))
                try skip(source, size, buffer)
            default:
                throw HaulError(
                    HaulError.Code.unsupportedEntry,
                    "refusing archive: entry '\(HaulError.printable(path))' is a \(TarExtraction.describe(header.type)), which Haul does not extract")
            }
        }
        while try source.read(into: buffer, count: ioChunkSize) > 0 {}
        for link in symlinks { try sink.createSymlink(link.path, target: link.target) }
        summary.symlinks = symlinks.count
        return summary
    }

    /// Adds `bytes` to `charged`, refusing the archive once that passes the size limit.
    func charge(_ bytes: Int64, to charged: inout Int64) throws {
        charged += bytes
        if charged > limits.maxSize { throw ZipCatalog.tooLarge(declared: UInt64(charged), overflow: false, limits) }
    }

    /// The most pax and GNU long-name data allowed before one entry.
    static let maxMetadata: Int64 = 1 << 20

    private func nextHeader(_ source: any ByteSource, _ buffer: UnsafeMutableRawPointer) throws -> TarHeader? {
        let got = try source.readFully(into: buffer, count: 512)
        // GNU tar and bsdtar accept an archive that simply stops after an entry's last block.
        if got == 0 { return nil }
        guard got == 512 else { throw HaulError.corrupt("the tar archive is truncated inside a header") }
        return try TarHeader.parse(Array(UnsafeRawBufferPointer(start: buffer, count: 512)))
    }

    /// Reads a metadata entry (pax header, GNU long name) of at most 1 MiB, plus its padding.
    private func readSmall(_ source: any ByteSource, _ size: Int64, _ buffer: UnsafeMutableRawPointer) throws -> [UInt8] {
        guard size <= 1 << 20 else { throw HaulError.corrupt("a tar metadata entry claims \(size) bytes") }
        var data: [UInt8] = []
        try copy(source, size, buffer) { data += $0 }
        return data
    }

    /// Reads past `size` bytes of entry data and its padding.
    func skip(_ source: any ByteSource, _ size: Int64, _ buffer: UnsafeMutableRawPointer) throws {
        try copy(source, size, buffer) { _ in }
    }

    /// Passes `size` bytes of entry data to `sink` in chunks, then skips the padding to the next block.
    func copy(_ source: any ByteSource, _ size: Int64, _ buffer: UnsafeMutableRawPointer, sink: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        let padded = (size + 511) / 512 * 512
        var done: Int64 = 0
        while done < padded {
            let want = Int(min(Int64(ioChunkSize), padded - done))
            let got = try source.readFully(into: buffer, count: want)
            guard got == want else { throw HaulError.corrupt("the tar archive is truncated") }
            let useful = Int(max(0, min(Int64(got), size - done)))
            if useful > 0 { try sink(UnsafeRawBufferPointer(start: buffer, count: useful)) }
            done += Int64(got)
        }
    }

    private static func describe(_ type: UInt8) -> String {
        switch type {
        case UInt8(ascii: "1"): "hard link"
        case UInt8(ascii: "3"), UInt8(ascii: "4"): "device"
        case UInt8(ascii: "6"): "FIFO"
        case UInt8(ascii: "S"): "GNU sparse file"
        default: "entry of type '\(String(UnicodeScalar(type)))'"
        }
    }
}
