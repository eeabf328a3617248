import HaulCore

/// Where the stored bytes of a GNU sparse tar entry go: `chunks` of data at their offsets in a file
/// of `realSize` bytes, holes (zeros) everywhere else. Parsing only; `TarExtraction` writes the file.
///
/// GNU tar writes four encodings, all read here:
/// - old GNU (`--format=gnu`): type `S`, four (offset, size) pairs in the header, more in 512-byte
///   extension blocks after it, the real size at byte 483;
/// - pax 0.0: repeated `GNU.sparse.offset` / `GNU.sparse.numbytes` records, `GNU.sparse.size`;
/// - pax 0.1: `GNU.sparse.map` (`offset,size,…`), `GNU.sparse.size`, `GNU.sparse.name`;
/// - pax 1.0: `GNU.sparse.major=1`, `GNU.sparse.realsize`, `GNU.sparse.name`, and the map as
///   decimal lines at the start of the entry's data, padded to a block.
struct SparseMap: Equatable {
    struct Chunk: Equatable {
        var offset: Int64
        var length: Int64
    }

    var realSize: Int64
    var chunks: [Chunk]

    /// The most chunks a map may list before the archive is taken for hostile.
    static let maxChunks = 1 << 20

    /// What a pax header says about sparseness.
    enum PaxSparse: Equatable {
        /// Formats 0.0 and 0.1: the whole map is in the records.
        case map(SparseMap)
        /// Format 1.0: the map opens the entry's data; the real size is known.
        case mapInData(realSize: Int64)
    }

    /// Reads the GNU sparse records of one pax header (in order, repeats kept); `nil` when there are none.
    static func fromPax(_ records: [(key: String, value: String)]) throws -> PaxSparse? {
        let sparse = records.filter { $0.key.hasPrefix("GNU.sparse.") }
        guard !sparse.isEmpty else { return nil }
        func value(_ key: String) -> String? { sparse.last { $0.key == key }?.value }
        if let major = value("GNU.sparse.major") {
            guard major == "1", value("GNU.sparse.minor") == "0" else {
                throw unsupported("GNU sparse format \(major).\(value("GNU.sparse.minor") ?? "?")")
            }
            return .mapInData(realSize: try number(value("GNU.sparse.realsize"), "GNU.sparse.realsize"))
        }
        let realSize = try number(value("GNU.sparse.size") ?? value("GNU.sparse.realsize"), "GNU.sparse.size")
        var numbers: [Int64] = []
        if let map = value("GNU.sparse.map") {
            numbers = try map.isEmpty ? [] : map.split(separator: ",", omittingEmptySubsequences: false).map { try number(String($0), "GNU.sparse.map") }
        } else {
            for record in sparse where record.key == "GNU.sparse.offset" || record.key == "GNU.sparse.numbytes" {
                guard (numbers.count % 2 == 0) == (record.key == "GNU.sparse.offset") else {
                    throw HaulError.corrupt("the GNU.sparse.offset and GNU.sparse.numbytes records do not alternate")
                }
                numbers.append(try number(record.value, record.key))
            }
        }
        if let count = value("GNU.sparse.numblocks"), try number(count, "GNU.sparse.numblocks") * 2 != numbers.count {
            throw HaulError.corrupt("GNU.sparse.numblocks does not match the sparse map")
        }
        return .map(try pairs(numbers, realSize: realSize))
    }

    /// Parses the format 1.0 map at the start of an entry's data: a count, then that many offset and
    /// size lines. Returns `nil` while `text` (whole blocks read so far) does not hold it all.
    static func fromDataMap(_ text: [UInt8], realSize: Int64) throws -> (map: SparseMap, blocks: Int)? {
        var numbers: [Int64] = []
        var start = 0
        var expected: Int?
        for index in text.indices where text[index] == 0x0A {
            numbers.append(try number(String(decoding: text[start..<index], as: UTF8.self), "sparse map line"))
            start = index + 1
            if expected == nil {
                guard numbers[0] <= Int64(maxChunks) else { throw tooMany(numbers[0]) }
                expected = 1 + 2 * Int(numbers[0])
            }
            if numbers.count == expected {
                return (try pairs(Array(numbers.dropFirst()), realSize: realSize), (index + 1 + 511) / 512)
            }
        }
        guard text.count - start <= 20 else { throw HaulError.corrupt("a GNU sparse map line is not a number") }
        return nil
    }

    /// Reads the (offset, size) pairs of an old GNU header (at byte 386) or extension block (at 0).
    /// - Returns: the pairs, and whether another extension block follows.
    static func oldGNUEntries(_ block: [UInt8], isExtension: Bool) throws -> (numbers: [Int64], more: Bool) {
        let (start, count, flag) = isExtension ? (0, 21, 504) : (386, 4, 482)
        var numbers: [Int64] = []
        for slot in 0..<count {
            let base = start + slot * 24
            guard block[base + 12] != 0 else { break }
            numbers.append(try TarHeader.number(block[base..<(base + 12)], "sparse offset"))
            numbers.append(try TarHeader.number(block[(base + 12)..<(base + 24)], "sparse size"))
        }
        return (numbers, block[flag] != 0)
    }

    /// The real size of an old GNU sparse header.
    static func oldGNURealSize(_ block: [UInt8]) throws -> Int64 {
        try TarHeader.number(block[483..<495], "sparse real size")
    }

    /// Builds a map from flat (offset, size) numbers, refusing anything GNU tar would not write:
    /// chunks out of order, overlapping, or past the real size.
    static func pairs(_ numbers: [Int64], realSize: Int64) throws -> SparseMap {
        guard numbers.count % 2 == 0 else { throw HaulError.corrupt("a GNU sparse map has an odd number of values") }
        guard numbers.count / 2 <= maxChunks else { throw tooMany(Int64(numbers.count / 2)) }
        guard realSize >= 0, realSize < 1 << 60 else { throw HaulError.corrupt("a GNU sparse file claims \(realSize) bytes") }
        var chunks: [Chunk] = []
        var end: Int64 = 0
        for index in stride(from: 0, to: numbers.count, by: 2) {
            let chunk = Chunk(offset: numbers[index], length: numbers[index + 1])
            guard chunk.offset >= end, chunk.length <= realSize - chunk.offset else {
                throw HaulError.corrupt("a GNU sparse map has chunks out of order, overlapping or past the file's end")
            }
            end = chunk.offset + chunk.length
            chunks.append(chunk)
        }
        return SparseMap(realSize: realSize, chunks: chunks)
    }

    /// Bytes of data the chunks hold: what the archive must store for the entry.
    var storedSize: Int64 { chunks.reduce(0) { $0 + $1.length } }

    private static func number(_ text: String?, _ what: String) throws -> Int64 {
        guard let text, let value = Int64(text), value >= 0 else { throw HaulError.corrupt("the \(what) of a GNU sparse file is invalid") }
        return value
    }

    private static func tooMany(_ count: Int64) -> HaulError {
        HaulError.corrupt("a GNU sparse map lists \(count) chunks, more than \(maxChunks)")
    }

    private static func unsupported(_ what: String) -> HaulError {
        HaulError(
            HaulError.Code.unsupportedEntry, "refusing archive: it holds a \(what) file, which Haul does not know",
            hint: "extract it with GNU tar")
    }
}

/// The sparse part of an old GNU header: flat (offset, size) numbers, whether extension blocks follow, the real size.
struct OldGNUSparse: Equatable {
    var numbers: [Int64]
    var extended: Bool
    var realSize: Int64
}
