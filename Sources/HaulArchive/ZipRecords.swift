import HaulCore

/// Signatures and sentinels of the zip format (APPNOTE 6.3.x).
enum ZipSignature {
    static let localHeader: UInt32 = 0x0403_4B50
    static let centralHeader: UInt32 = 0x0201_4B50
    static let endRecord: UInt32 = 0x0605_4B50
    static let zip64EndRecord: UInt32 = 0x0606_4B50
    static let zip64Locator: UInt32 = 0x0706_4B50
    static let dataDescriptor: UInt32 = 0x0807_4B50
    static let zip64Extra: UInt16 = 0x0001
    static let timestampExtra: UInt16 = 0x5455
    static let unicodePathExtra: UInt16 = 0x7075
    static let max32: UInt64 = 0xFFFF_FFFF
    static let max16: UInt64 = 0xFFFF
}

/// Where the central directory is, after the end record and any ZIP64 end record are resolved.
struct ZipEnd: Equatable {
    var entryCount: UInt64
    var directoryOffset: UInt64
    var directorySize: UInt64
    /// Where the central directory must end: the start of the ZIP64 end record, or of the end record.
    var directoryEnd: UInt64
    /// Bytes in front of the zip that its offsets do not count (a self-extractor's stub not fixed by
    /// `zip -A`); add them to every offset the archive records, as unzip does.
    var prefix: UInt64 = 0

    /// Finds and resolves the end records of a zip of `fileSize` bytes; `read(offset, count)` returns file bytes.
    ///
    /// The end record must be the last thing in the file (a comment is fine, trailing junk is refused).
    static func locate(fileSize: UInt64, read: (UInt64, Int) throws -> [UInt8]) throws -> ZipEnd {
        let tailCount = Int(min(fileSize, 22 + 0xFFFF + 20))
        let tailStart = fileSize - UInt64(tailCount)
        let tail = try read(tailStart, tailCount)
        var junk: UInt64?
        var index = tailCount - 22
        while index >= 0 {
            if tail[index] == 0x50, tail[index + 1] == 0x4B, tail[index + 2] == 5, tail[index + 3] == 6 {
                let commentLength = Int(tail[index + 20]) | Int(tail[index + 21]) << 8
                let end = index + 22 + commentLength
                if end == tailCount { return try resolve(tail: tail, at: index, tailStart: tailStart, read: read) }
                if end < tailCount, junk == nil { junk = UInt64(tailCount - end) }
            }
            index -= 1
        }
        if let junk {
            throw HaulError.corrupt("\(junk) bytes of unexpected data follow the end of the zip central directory")
        }
        throw HaulError.corrupt("no zip end of central directory record found (not a zip, or truncated)")
    }

    private static func resolve(tail: [UInt8], at index: Int, tailStart: UInt64, read: (UInt64, Int) throws -> [UInt8]) throws -> ZipEnd {
        var cursor = ByteCursor(tail, at: index + 4, context: "zip end record")
        let disk = try cursor.u16()
        let directoryDisk = try cursor.u16()
        let entriesOnDisk = try cursor.u16()
        let entries = try cursor.u16()
        let size = try cursor.u32()
        let offset = try cursor.u32()
        let endOffset = tailStart + UInt64(index)
        var result = ZipEnd(entryCount: UInt64(entries), directoryOffset: UInt64(offset), directorySize: UInt64(size), directoryEnd: endOffset)
        var locator = ByteCursor(tail, at: max(index - 20, 0), context: "zip64 locator")
        if index >= 20, try locator.u32() == ZipSignature.zip64Locator {
            _ = try locator.u32()
            let recordOffset = try locator.u64()
            guard recordOffset <= endOffset - 20, endOffset - 20 - recordOffset >= 56 else {
                throw HaulError.corrupt("the zip64 end record offset points outside the file")
            }
            let record = try read(recordOffset, 56)
            var fields = ByteCursor(record, context: "zip64 end record")
            guard try fields.u32() == ZipSignature.zip64EndRecord else { throw HaulError.corrupt("the zip64 end record has a bad signature") }
            try fields.skip(12)
            let disk64 = try fields.u32()
            let directoryDisk64 = try fields.u32()
            let onDisk64 = try fields.u64()
            result.entryCount = try fields.u64()
            result.directorySize = try fields.u64()
            result.directoryOffset = try fields.u64()
            result.directoryEnd = recordOffset
            guard disk64 == 0, directoryDisk64 == 0, onDisk64 == result.entryCount else { throw multiDisk() }
        } else {
            guard disk == 0, directoryDisk == 0, entriesOnDisk == entries else { throw multiDisk() }
        }
        guard result.directorySize <= result.directoryEnd, result.directoryOffset <= result.directoryEnd - result.directorySize else {
            throw HaulError.corrupt("the zip central directory does not end where the end record starts (truncated or damaged)")
        }
        result.prefix = result.directoryEnd - result.directorySize - result.directoryOffset
        result.directoryOffset += result.prefix
        return result
    }

    /// The refusal of a split (spanned) zip or one of its parts.
    static func multiDisk() -> HaulError {
        HaulError(
            HaulError.Code.unsupportedEntry, "refusing archive: it is (part of) a split zip; multi-disk archives are not supported",
            hint: "join the parts first: zip -s 0 split.zip --out whole.zip")
    }
}

/// One central directory record, with ZIP64 and extended-timestamp extras applied.
struct CentralEntry {
    var rawName: [UInt8]
    var versionMadeBy: UInt16
    var flags: UInt16
    var method: UInt16
    var dosTime: UInt16
    var dosDate: UInt16
    var crc: UInt32
    var compressedSize: UInt64
    var size: UInt64
    var localHeaderOffset: UInt64
    var externalAttributes: UInt32
    var modificationTime: Int64?
    /// The name from an Info-ZIP Unicode Path extra field (0x7075) whose CRC matches the header name.
    var unicodeName: String?

    var isEncrypted: Bool { flags & 0x41 != 0 || method == 99 }
    var isUTF8: Bool { flags & 0x800 != 0 }
    var hasDataDescriptor: Bool { flags & 0x8 != 0 }

    /// The Unix `st_mode` from the external attributes, when a Unix-like host wrote it.
    var unixMode: UInt32? {
        let host = versionMadeBy >> 8
        let mode = externalAttributes >> 16
        return (host == 3 || host == 19) && mode != 0 ? mode : nil
    }

    /// The entry name: the Unicode Path extra, else UTF-8 when flagged (bit 11), else UTF-8 when a Unix host
    /// wrote valid UTF-8 (Info-ZIP `zip` on Linux stores names so, unflagged), else IBM code page 437.
    func decodedName() throws -> String {
        if let unicodeName { return unicodeName }
        if isUTF8 { return try EntryPath.decodeUTF8(rawName) }
        let host = versionMadeBy >> 8
        if host == 3 || host == 19, let text = String(validating: rawName, as: UTF8.self) { return text }
        return EntryPath.decodeCP437(rawName)
    }

    /// Parses `count` records from the bytes of the whole central directory.
    static func parseDirectory(_ bytes: [UInt8], count: UInt64) throws -> [CentralEntry] {
        var cursor = ByteCursor(bytes, context: "zip central directory")
        var entries: [CentralEntry] = []
        entries.reserveCapacity(Int(min(count, 1 << 20)))
        for _ in 0..<count {
            guard try cursor.u32() == ZipSignature.centralHeader else {
                throw HaulError.corrupt("the zip central directory has a bad record signature after \(entries.count) entries")
            }
            entries.append(try parseRecord(&cursor))
        }
        guard cursor.remaining == 0 else { throw HaulError.corrupt("the zip central directory holds more records than the end record counts") }
        return entries
    }

    private static func parseRecord(_ cursor: inout ByteCursor) throws -> CentralEntry {
        let madeBy = try cursor.u16()
        _ = try cursor.u16()
        let flags = try cursor.u16()
        let method = try cursor.u16()
        let time = try cursor.u16()
        let date = try cursor.u16()
        let crc = try cursor.u32()
        var compressed = UInt64(try cursor.u32())
        var size = UInt64(try cursor.u32())
        let nameLength = Int(try cursor.u16())
        let extraLength = Int(try cursor.u16())
        let commentLength = Int(try cursor.u16())
        var disk = UInt64(try cursor.u16())
        _ = try cursor.u16()
        let external = try cursor.u32()
        var offset = UInt64(try cursor.u32())
        let name = try cursor.take(nameLength)
        let extra = try cursor.take(extraLength)
        try cursor.skip(commentLength)
        var mtime: Int64?
        var unicodeName: String?
        try forEachExtra(extra) { id, field in
            if id == ZipSignature.zip64Extra {
                var z = ByteCursor(field, context: "zip64 extra field")
                if size == ZipSignature.max32 { size = try z.u64() }
                if compressed == ZipSignature.max32 { compressed = try z.u64() }
                if offset == ZipSignature.max32 { offset = try z.u64() }
                if disk == ZipSignature.max16 { disk = UInt64(try z.u32()) }
            } else if id == ZipSignature.timestampExtra, field.count >= 5, field[0] & 1 != 0 {
                var t = ByteCursor(field, at: 1, context: "timestamp extra field")
                mtime = Int64(Int32(bitPattern: try t.u32()))
            } else if id == ZipSignature.unicodePathExtra, field.count > 5, field[0] == 1 {
                var u = ByteCursor(field, at: 1, context: "unicode path extra field")
                let crc = name.withUnsafeBytes { crc32Update(0, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, $0.count) }
                if try u.u32() == crc { unicodeName = String(validating: field[5...], as: UTF8.self) }
            }
        }
        guard disk == 0 else { throw ZipEnd.multiDisk() }
        if [size, compressed, offset].contains(ZipSignature.max32) {
            throw HaulError.corrupt("a zip entry needs a zip64 extra field that is missing")
        }
        return CentralEntry(
            rawName: name, versionMadeBy: madeBy, flags: flags, method: method, dosTime: time, dosDate: date, crc: crc,
            compressedSize: compressed, size: size, localHeaderOffset: offset, externalAttributes: external, modificationTime: mtime,
            unicodeName: unicodeName)
    }
}

/// Calls `body` with each (id, data) of a zip extra field block; a few trailing padding bytes are ignored.
func forEachExtra(_ extra: [UInt8], _ body: (UInt16, [UInt8]) throws -> Void) throws {
    var cursor = ByteCursor(extra, context: "zip extra field")
    while cursor.remaining >= 4 {
        let id = try cursor.u16()
        let length = Int(try cursor.u16())
        try body(id, try cursor.take(length))
    }
}
