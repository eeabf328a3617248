import Glibc
import HaulCore

/// Appends entries in order to an `ArchiveOutput` while worker threads deflate the next files ahead.
struct ZipArchiveBuilder {
    let output: ArchiveOutput
    let level: Int32?
    let spoolDirectory: String

    /// Files at least this large get a ZIP64 local header before their final size is known.
    private static let zip64Threshold: Int64 = 0xF000_0000

    func write(_ entries: [WriteEntry]) throws -> ZipWriteSummary {
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: ioChunkSize, alignment: 16)
        defer { scratch.deallocate() }
        let pipeline = OrderedPipeline<Spool?>(count: entries.count, window: 2 * workerCount + 2, threads: level == nil ? 0 : workerCount) {
            [level, spoolDirectory] in
            let compressor = level.map { EntryCompressor(level: $0, spoolDirectory: spoolDirectory) }
            return { index in
                guard let compressor, entries[index].kind == .file, entries[index].size > 0 else { return nil }
                return try compressor.compress(entries[index].source)
            }
        }
        defer { pipeline.finish { $0?.release() } }
        var summary = ZipWriteSummary()
        var central: [UInt8] = []
        for (index, entry) in entries.enumerated() {
            let spool = level == nil ? nil : try pipeline.take(index)
            defer { spool?.release() }
            let info = try append(entry, spool: spool, scratch: scratch)
            central += ZipRecordEncoder.centralHeader(info)
            summary.entries += 1
            if entry.kind == .file {
                summary.files += 1
                summary.bytes += Int64(info.size)
            }
        }
        let directoryOffset = output.offset
        try output.append(central)
        try output.append(
            ZipRecordEncoder.endRecords(count: UInt64(entries.count), directoryOffset: directoryOffset, directorySize: UInt64(central.count)))
        try output.flush()
        return summary
    }

    private func append(_ entry: WriteEntry, spool: Spool?, scratch: UnsafeMutableRawPointer) throws -> ZipRecordInfo {
        var info = ZipRecordInfo(
            name: Array(entry.name.utf8), method: 0, crc: 0, compressedSize: 0, size: 0, localHeaderOffset: output.offset,
            unixMode: entry.mode, modificationTime: entry.modificationTime, zip64InLocalHeader: false)
        switch entry.kind {
        case .directory:
            try output.append(ZipRecordEncoder.localHeader(info))
        case .symlink(let target):
            let bytes = Array(target.utf8)
            info.crc = bytes.withUnsafeBytes { crc32Update(0, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, $0.count) }
            (info.size, info.compressedSize) = (UInt64(bytes.count), UInt64(bytes.count))
            try output.append(ZipRecordEncoder.localHeader(info))
            try output.append(bytes)
        case .file:
            if let spool {
                (info.method, info.crc, info.size, info.compressedSize) = (8, spool.crc, spool.size, spool.compressedSize)
                info.zip64InLocalHeader = info.size >= ZipSignature.max32 || info.compressedSize >= ZipSignature.max32
                try output.append(ZipRecordEncoder.localHeader(info))
                if let fd = spool.descriptor {
                    try output.appendFile(fd, count: spool.compressedSize, scratch: scratch)
                } else {
                    try spool.memory.withUnsafeBytes { try output.append($0) }
                }
            } else {
                try appendStored(entry, &info, scratch: scratch)
            }
        }
        return info
    }

    /// Copies a file uncompressed, then rewrites its local header with the CRC and size it turned out to have.
    private func appendStored(_ entry: WriteEntry, _ info: inout ZipRecordInfo, scratch: UnsafeMutableRawPointer) throws {
        info.zip64InLocalHeader = entry.size >= ZipArchiveBuilder.zip64Threshold
        try output.append(ZipRecordEncoder.localHeader(info))
        let fd = try check("open", entry.source) { open(entry.source, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        while true {
            let got = Int(try check("read", entry.source) { Int32(read(fd, scratch, ioChunkSize)) })
            if got == 0 { break }
            info.crc = crc32Update(info.crc, scratch, got)
            info.size += UInt64(got)
            try output.append(UnsafeRawBufferPointer(start: scratch, count: got))
        }
        info.compressedSize = info.size
        guard info.zip64InLocalHeader || info.size < ZipSignature.max32 else {
            throw HaulError(
                HaulError.Code.io, "'\(entry.source)' grew past 4 GiB while it was being archived", hint: "archive it again once it stops changing")
        }
        try output.patch(ZipRecordEncoder.localHeader(info), at: info.localHeaderOffset)
    }
}
