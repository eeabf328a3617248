import HaulCore

/// The byte ranges of zip entries, checked for overlap the way Info-ZIP 6.0-28 does against non-recursive zip bombs.
enum ZipLayout {
    /// The bytes one entry occupies, from its local header to the end of its data descriptor.
    struct Span: Equatable {
        var start: UInt64
        var end: UInt64
        var name: String
    }

    /// The smallest span each entry can have, from the central directory alone: header, name and data.
    static func minimalSpans(_ entries: [CentralEntry]) -> [Span] {
        entries.map { entry in
            let (end, overflow) = entry.localHeaderOffset.addingReportingOverflow(30 + UInt64(entry.rawName.count))
            let (dataEnd, overflow2) = end.addingReportingOverflow(entry.compressedSize)
            return Span(start: entry.localHeaderOffset, end: overflow || overflow2 ? .max : dataEnd, name: displayName(entry))
        }
    }

    /// Refuses any two spans that share a byte, and any span that reaches into the central directory.
    static func checkOverlaps(_ spans: [Span], directoryStart: UInt64) throws {
        let sorted = spans.sorted { $0.start < $1.start }
        for (index, span) in sorted.enumerated() {
            if span.end > directoryStart {
                throw HaulError(
                    HaulError.Code.overlappingEntries,
                    "refusing archive: the data of entry '\(HaulError.printable(span.name))' overlaps the central directory",
                    hint: "this is how zip bombs and damaged archives look; nothing was extracted")
            }
            if index + 1 < sorted.count, span.end > sorted[index + 1].start {
                throw HaulError(
                    HaulError.Code.overlappingEntries,
                    "refusing archive: entries '\(HaulError.printable(span.name))' and '\(HaulError.printable(sorted[index + 1].name))' overlap",
                    hint: "this is how zip bombs and damaged archives look; nothing was extracted")
            }
        }
    }

    /// Reads every local header, checks it agrees with the central directory, and returns exact spans and data offsets.
    static func readLocalHeaders(_ file: InputFile, _ entries: [CentralEntry]) throws -> (spans: [Span], dataOffsets: [UInt64]) {
        var spans: [Span] = []
        var offsets: [UInt64] = []
        spans.reserveCapacity(entries.count)
        offsets.reserveCapacity(entries.count)
        for entry in entries {
            let name = displayName(entry)
            let header = try file.bytes(30 + entry.rawName.count, at: Int64(entry.localHeaderOffset), what: "the local header of '\(name)'")
            var cursor = ByteCursor(header, context: "the local header of '\(name)'")
            guard try cursor.u32() == ZipSignature.localHeader else { throw HaulError.corrupt("the local header of '\(name)' has a bad signature") }
            try cursor.skip(2)
            let flags = try cursor.u16()
            let method = try cursor.u16()
            try cursor.skip(4)
            let crc = try cursor.u32()
            let compressed = UInt64(try cursor.u32())
            let size = UInt64(try cursor.u32())
            let nameLength = Int(try cursor.u16())
            let extraLength = UInt64(try cursor.u16())
            guard nameLength == entry.rawName.count, try cursor.take(nameLength) == entry.rawName else {
                throw mismatch(name, "name")
            }
            guard method == entry.method else { throw mismatch(name, "compression method") }
            guard flags & 0x41 == entry.flags & 0x41, flags & 0x8 == entry.flags & 0x8 else { throw mismatch(name, "flags") }
            let dataOffset = entry.localHeaderOffset + 30 + UInt64(nameLength) + extraLength
            let (dataEnd, overflow) = dataOffset.addingReportingOverflow(entry.compressedSize)
            guard !overflow, dataEnd <= UInt64(file.size) else { throw HaulError.corrupt("the data of '\(name)' lies past the end of the file") }
            var end = dataEnd
            // The local ZIP64 extra is read only when something depends on it (one pread less per plain entry).
            var local64: [UInt8]?
            if entry.hasDataDescriptor || size == ZipSignature.max32 || compressed == ZipSignature.max32 {
                let extra = try file.bytes(Int(extraLength), at: Int64(dataOffset - extraLength), what: "the local extra field of '\(name)'")
                try forEachExtra(extra) { id, field in if id == ZipSignature.zip64Extra { local64 = field } }
            }
            if entry.hasDataDescriptor {
                // The local fields may be zero (the usual streaming case); the descriptor must agree.
                guard crc == 0 || crc == entry.crc, [0, entry.compressedSize].contains(compressed) || compressed == ZipSignature.max32,
                    [0, entry.size].contains(size) || size == ZipSignature.max32
                else { throw mismatch(name, "sizes or CRC") }
                let zip64 = entry.size >= ZipSignature.max32 || entry.compressedSize >= ZipSignature.max32 || local64 != nil
                let tail = try file.bytes(min(24, Int(UInt64(file.size) - dataEnd)), at: Int64(dataEnd), what: "the data descriptor of '\(name)'")
                var descriptor = ByteCursor(tail, context: "the data descriptor of '\(name)'")
                let signed = try descriptor.u32() == ZipSignature.dataDescriptor
                if !signed { descriptor = ByteCursor(tail, context: "the data descriptor of '\(name)'") }
                let written = (
                    crc: try descriptor.u32(), compressed: zip64 ? try descriptor.u64() : UInt64(try descriptor.u32()),
                    size: zip64 ? try descriptor.u64() : UInt64(try descriptor.u32())
                )
                guard written.crc == entry.crc, written.compressed == entry.compressedSize, written.size == entry.size else {
                    throw mismatch(name, "sizes or CRC in its data descriptor")
                }
                end += (signed ? 4 : 0) + (zip64 ? 20 : 12)
            } else {
                var sizes = (size, compressed)
                if size == ZipSignature.max32 || compressed == ZipSignature.max32, let local64 {
                    var z = ByteCursor(local64, context: "the local zip64 extra field of '\(name)'")
                    if size == ZipSignature.max32 { sizes.0 = try z.u64() }
                    if compressed == ZipSignature.max32 { sizes.1 = try z.u64() }
                }
                guard crc == entry.crc, sizes.0 == entry.size, sizes.1 == entry.compressedSize else { throw mismatch(name, "sizes or CRC") }
            }
            spans.append(Span(start: entry.localHeaderOffset, end: end, name: name))
            offsets.append(dataOffset)
        }
        return (spans, offsets)
    }

    private static func displayName(_ entry: CentralEntry) -> String {
        (try? entry.decodedName()) ?? EntryPath.decodeCP437(entry.rawName)
    }

    private static func mismatch(_ name: String, _ field: String) -> HaulError {
        HaulError(
            HaulError.Code.headerMismatch,
            "refusing archive: the local header of '\(HaulError.printable(name))' disagrees with the central directory on the \(field)",
            hint: "the archive is damaged or crafted to fool some extractors; nothing was extracted")
    }
}
