import Glibc
import HaulCore

extension TarExtraction {
    /// Writes a GNU sparse entry as the real file: each stored chunk at its offset, holes left as
    /// holes (zeros on a sink without holes), the file cut to its real size. Reads any map that precedes the data (old GNU extension
    /// blocks, the pax 1.0 map) and refuses a map that does not account for exactly the stored bytes.
    /// Holes count against the size limit only where they are written out (`EntrySink.keepsHoles`)
    /// and the limit was asked for (`Limits.holesCount`): the default, a multiple of the archive's
    /// size, bounds stored data, and holes are not stored.
    func extractSparse(
        _ path: String, header: TarHeader, pax: SparseMap.PaxSparse?, size: Int64, mtime: Int64, _ source: any ByteSource,
        _ buffer: UnsafeMutableRawPointer, _ summary: inout ExtractionSummary, charged: inout Int64
    ) throws {
        let (map, dataSize) = try readMap(header: header, pax: pax, size: size, source, buffer)
        guard map.storedSize == dataSize else {
            throw HaulError.corrupt("the sparse map of '\(HaulError.printable(path))' lists \(map.storedSize) bytes but the entry stores \(dataSize)")
        }
        summary.bytes += map.realSize
        try charge(sink.keepsHoles || !limits.holesCount ? map.storedSize : map.realSize, to: &charged)
        if let parent = EntryPath.ancestors(of: path).last { try sink.makeDirectory(parent, modificationTime: nil) }
        let file = try sink.createFile(path, sizeBound: map.realSize, executable: header.mode & 0o111 != 0, modificationTime: mtime)
        do {
            var index = 0
            var within: Int64 = 0
            try copy(source, dataSize, buffer) { piece in
                var done = 0
                while done < piece.count {
                    while map.chunks[index].length == within { (index, within) = (index + 1, 0) }
                    let count = Int(min(Int64(piece.count - done), map.chunks[index].length - within))
                    try file.write(UnsafeRawBufferPointer(rebasing: piece[done..<done + count]), at: map.chunks[index].offset + within)
                    (done, within) = (done + count, within + Int64(count))
                }
            }
        } catch {
            file.abort()
            throw error
        }
        try file.finish(size: map.realSize)
        summary.files += 1
    }

    /// The entry's map, and how many bytes of chunk data follow it in the stream.
    private func readMap(header: TarHeader, pax: SparseMap.PaxSparse?, size: Int64, _ source: any ByteSource, _ buffer: UnsafeMutableRawPointer)
        throws -> (SparseMap, Int64)
    {
        switch pax {
        case .map(let map):
            return (map, size)
        case .mapInData(let realSize):
            var text: [UInt8] = []
            while true {
                guard Int64(text.count) + 512 <= size else { throw HaulError.corrupt("a GNU sparse map runs past its entry") }
                text += try block(source, buffer)
                if let (map, blocks) = try SparseMap.fromDataMap(text, realSize: realSize) {
                    return (map, size - Int64(blocks) * 512)
                }
            }
        case nil:
            guard let old = header.oldSparse else { throw HaulError.corrupt("a tar entry is marked sparse without a map") }
            var numbers = old.numbers
            var more = old.extended
            while more {
                guard numbers.count / 2 <= SparseMap.maxChunks else { throw HaulError.corrupt("a GNU sparse header has too many extension blocks") }
                let (next, extended) = try SparseMap.oldGNUEntries(try block(source, buffer), isExtension: true)
                numbers += next
                more = extended
            }
            return (try SparseMap.pairs(numbers, realSize: old.realSize), size)
        }
    }

    private func block(_ source: any ByteSource, _ buffer: UnsafeMutableRawPointer) throws -> [UInt8] {
        guard try source.readFully(into: buffer, count: 512) == 512 else { throw HaulError.corrupt("the tar archive is truncated") }
        return Array(UnsafeRawBufferPointer(start: buffer, count: 512))
    }
}
