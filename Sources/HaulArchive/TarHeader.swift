import HaulCore

/// One 512-byte tar header block, ustar or GNU, parsed without any I/O.
struct TarHeader: Equatable {
    var name: String
    var mode: UInt32
    var size: Int64
    var modificationTime: Int64
    var type: UInt8
    var linkName: String
    /// The sparse map in an old GNU sparse header (type `S`), and whether extension blocks follow.
    var oldSparse: OldGNUSparse? = nil

    /// Whether `block` has the ustar magic and a valid checksum.
    static func looksLikeTar(_ block: [UInt8]) -> Bool {
        block.count == 512 && Array(block[257..<262]) == Array("ustar".utf8) && (try? checksumMatches(block)) == true
    }

    /// Parses a header block; returns `nil` for an all-zero block (the end-of-archive marker).
    static func parse(_ block: [UInt8]) throws -> TarHeader? {
        if block.allSatisfy({ $0 == 0 }) { return nil }
        guard try checksumMatches(block) else { throw HaulError.corrupt("a tar header fails its checksum") }
        var name = text(block[0..<100])
        if Array(block[257..<262]) == Array("ustar".utf8), block[345] != 0, block[262] == 0 {
            name = text(block[345..<500]) + "/" + name
        }
        let size = try number(block[124..<136], "size")
        guard size >= 0 else { throw HaulError.corrupt("a tar header has a negative size") }
        var header = TarHeader(
            name: name, mode: UInt32(truncatingIfNeeded: try number(block[100..<108], "mode")), size: size,
            modificationTime: try number(block[136..<148], "modification time"), type: block[156], linkName: text(block[157..<257]))
        if header.type == UInt8(ascii: "S") {
            let (numbers, more) = try SparseMap.oldGNUEntries(block, isExtension: false)
            header.oldSparse = OldGNUSparse(numbers: numbers, extended: more, realSize: try SparseMap.oldGNURealSize(block))
        }
        return header
    }

    /// Parses pax extended header records (`<length> <key>=<value>\n`); a repeated key keeps its last value.
    static func parsePax(_ data: [UInt8]) throws -> [String: String] {
        Dictionary(try parsePaxRecords(data), uniquingKeysWith: { $1 })
    }

    /// Parses pax extended header records in order, repeats kept (GNU sparse 0.0 repeats its keys).
    static func parsePaxRecords(_ data: [UInt8]) throws -> [(key: String, value: String)] {
        var records: [(key: String, value: String)] = []
        var index = 0
        while index < data.count {
            guard let space = data[index...].firstIndex(of: 0x20), let length = Int(String(decoding: data[index..<space], as: UTF8.self)),
                length > space - index, index + length <= data.count, data[index + length - 1] == 0x0A,
                let equals = data[(space + 1)..<(index + length)].firstIndex(of: 0x3D)
            else {
                throw HaulError.corrupt("a pax extended header record is malformed")
            }
            let key = String(decoding: data[(space + 1)..<equals], as: UTF8.self)
            records.append((key, decodeName(Array(data[(equals + 1)..<(index + length - 1)]))))
            index += length
        }
        return records
    }

    /// Decodes a name: UTF-8 when valid, otherwise each byte as Latin-1.
    static func decodeName(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    private static func text(_ field: ArraySlice<UInt8>) -> String {
        decodeName(Array(field.prefix { $0 != 0 }))
    }

    /// Reads an octal field (spaces and NULs around it) or a GNU base-256 field (high bit set).
    static func number(_ field: ArraySlice<UInt8>, _ what: String) throws -> Int64 {
        guard let first = field.first else { return 0 }
        if first & 0x80 != 0 {
            guard first & 0x40 == 0 else { throw HaulError.corrupt("a tar header has a negative \(what)") }
            var value = Int64(first & 0x3F)
            for byte in field.dropFirst() {
                guard value <= Int64.max >> 8 else { throw HaulError.corrupt("a tar header has an out-of-range \(what)") }
                value = value << 8 | Int64(byte)
            }
            return value
        }
        var value: Int64 = 0
        var started = false
        for byte in field {
            if byte == 0x20 || byte == 0 {
                if started { break } else { continue }
            }
            guard (0x30...0x37).contains(byte), value < Int64.max >> 3 else { throw HaulError.corrupt("a tar header has an invalid \(what)") }
            started = true
            value = value << 3 | Int64(byte - 0x30)
        }
        return value
    }

    private static func checksumMatches(_ block: [UInt8]) throws -> Bool {
        let stored = try number(block[148..<156], "checksum")
        var unsigned: Int64 = 0
        var signed: Int64 = 0
        for (index, byte) in block.enumerated() {
            let value = (148..<156).contains(index) ? 0x20 : byte
            unsigned += Int64(value)
            signed += Int64(Int8(bitPattern: value))
        }
        return stored == unsigned || stored == signed
    }
}
