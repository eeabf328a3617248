/// What the writer knows about one entry once its data is placed: enough to encode both headers.
struct ZipRecordInfo: Equatable {
    var name: [UInt8]
    var method: UInt16
    var crc: UInt32
    var compressedSize: UInt64
    var size: UInt64
    var localHeaderOffset: UInt64
    /// `st_mode` (type and permission bits) stored in the high half of the external attributes.
    var unixMode: UInt32
    var modificationTime: Int64
    /// Whether the local header carries a ZIP64 extra field (decided before the data is written).
    var zip64InLocalHeader: Bool

    var needsZip64: Bool { size >= ZipSignature.max32 || compressedSize >= ZipSignature.max32 || localHeaderOffset >= ZipSignature.max32 }
}

/// Encodes zip records (pure functions): UTF-8 flag, Unix host and mode, extended timestamp, ZIP64 as needed.
enum ZipRecordEncoder {
    static let versionMadeBy: UInt16 = 3 << 8 | 63

    static func localHeader(_ info: ZipRecordInfo) -> [UInt8] {
        var out = ByteWriter()
        let (date, time) = DOSTime.encode(info.modificationTime)
        out.u32(ZipSignature.localHeader)
        out.u16(info.zip64InLocalHeader ? 45 : 20)
        out.u16(0x800)
        out.u16(info.method)
        out.u16(time)
        out.u16(date)
        out.u32(info.crc)
        out.u32(info.zip64InLocalHeader ? UInt32.max : UInt32(info.compressedSize))
        out.u32(info.zip64InLocalHeader ? UInt32.max : UInt32(info.size))
        var extra = ByteWriter()
        if info.zip64InLocalHeader {
            extra.u16(ZipSignature.zip64Extra)
            extra.u16(16)
            extra.u64(info.size)
            extra.u64(info.compressedSize)
        }
        appendTimestamp(&extra, info.modificationTime)
        out.u16(UInt16(info.name.count))
        out.u16(UInt16(extra.bytes.count))
        out.append(info.name)
        out.append(extra.bytes)
        return out.bytes
    }

    static func centralHeader(_ info: ZipRecordInfo) -> [UInt8] {
        var out = ByteWriter()
        let (date, time) = DOSTime.encode(info.modificationTime)
        var zip64 = ByteWriter()
        func field(_ value: UInt64) -> UInt32 {
            guard value >= ZipSignature.max32 else { return UInt32(value) }
            zip64.u64(value)
            return UInt32.max
        }
        let size = field(info.size)
        let compressed = field(info.compressedSize)
        let offset = field(info.localHeaderOffset)
        var extra = ByteWriter()
        if !zip64.bytes.isEmpty {
            extra.u16(ZipSignature.zip64Extra)
            extra.u16(UInt16(zip64.bytes.count))
            extra.append(zip64.bytes)
        }
        appendTimestamp(&extra, info.modificationTime)
        out.u32(ZipSignature.centralHeader)
        out.u16(versionMadeBy)
        out.u16(info.needsZip64 || info.zip64InLocalHeader ? 45 : 20)
        out.u16(0x800)
        out.u16(info.method)
        out.u16(time)
        out.u16(date)
        out.u32(info.crc)
        out.u32(compressed)
        out.u32(size)
        out.u16(UInt16(info.name.count))
        out.u16(UInt16(extra.bytes.count))
        out.u16(0)
        out.u16(0)
        out.u16(0)
        out.u32(info.unixMode << 16 | (info.unixMode & 0o170000 == 0o040000 ? 0x10 : 0))
        out.u32(offset)
        out.append(info.name)
        out.append(extra.bytes)
        return out.bytes
    }

    /// The end record, preceded by a ZIP64 end record and locator when the count or an offset needs them.
    static func endRecords(count: UInt64, directoryOffset: UInt64, directorySize: UInt64) -> [UInt8] {
        var out = ByteWriter()
        let zip64 = count >= ZipSignature.max16 || directoryOffset >= ZipSignature.max32 || directorySize >= ZipSignature.max32
        if zip64 {
            let recordOffset = directoryOffset + directorySize
            out.u32(ZipSignature.zip64EndRecord)
            out.u64(44)
            out.u16(versionMadeBy)
            out.u16(45)
            out.u32(0)
            out.u32(0)
            out.u64(count)
            out.u64(count)
            out.u64(directorySize)
            out.u64(directoryOffset)
            out.u32(ZipSignature.zip64Locator)
            out.u32(0)
            out.u64(recordOffset)
            out.u32(1)
        }
        out.u32(ZipSignature.endRecord)
        out.u16(0)
        out.u16(0)
        out.u16(UInt16(min(count, ZipSignature.max16)))
        out.u16(UInt16(min(count, ZipSignature.max16)))
        out.u32(UInt32(min(directorySize, ZipSignature.max32)))
        out.u32(UInt32(min(directoryOffset, ZipSignature.max32)))
        out.u16(0)
        return out.bytes
    }

    private static func appendTimestamp(_ extra: inout ByteWriter, _ seconds: Int64) {
        extra.u16(ZipSignature.timestampExtra)
        extra.u16(5)
        extra.append([1])
        extra.u32(UInt32(bitPattern: Int32(clamping: seconds)))
    }
}
