import HaulCore

/// A zip entry that passed validation, ready to extract.
struct ZipEntryPlan {
    enum Kind { case file, directory, symlink }

    var path: String
    var kind: Kind
    var method: UInt16
    var crc: UInt32
    var compressedSize: UInt64
    var size: UInt64
    var dataOffset: UInt64
    var isExecutable: Bool
    var modificationTime: Int64
}

/// The whole validated central directory of a zip: built before anything is written, refused as a whole.
struct ZipCatalog {
    /// Entries in central directory order; `./` entries are dropped.
    var entries: [ZipEntryPlan]

    /// Reads and validates every name, kind, count, size, local header and byte range of `file`.
    static func read(_ file: InputFile, limits: Limits, allowSymlinks: Bool) throws -> ZipCatalog {
        let end = try ZipEnd.locate(fileSize: UInt64(file.size)) { try file.bytes($1, at: Int64($0), what: "the zip end record") }
        if end.entryCount > UInt64(limits.maxEntries) { throw tooManyEntries(end.entryCount, limits) }
        guard end.directorySize / 46 >= end.entryCount, end.directorySize <= 1 << 30 else {
            throw HaulError.corrupt("the zip central directory size (\(end.directorySize) bytes) does not fit \(end.entryCount) entries")
        }
        let directory = try file.bytes(Int(end.directorySize), at: Int64(end.directoryOffset), what: "the zip central directory")
        var central = try CentralEntry.parseDirectory(directory, count: end.entryCount)
        for index in central.indices where end.prefix > 0 {
            let (moved, overflow) = central[index].localHeaderOffset.addingReportingOverflow(end.prefix)
            guard !overflow else { throw HaulError.corrupt("a zip entry's offset lies past the end of the file") }
            central[index].localHeaderOffset = moved
        }
        var plans: [ZipEntryPlan] = []
        var kinds: [String: ZipEntryPlan.Kind] = [:]
        var total: UInt64 = 0
        var sources: [Int] = []
        for (index, entry) in central.enumerated() {
            guard let plan = try plan(entry, allowSymlinks: allowSymlinks) else { continue }
            if kinds.updateValue(plan.kind, forKey: plan.path) != nil {
                throw HaulError(HaulError.Code.duplicateEntry, "refusing archive: entry '\(HaulError.printable(plan.path))' appears twice")
            }
            let (sum, overflow) = total.addingReportingOverflow(plan.size)
            total = sum
            if overflow || total > UInt64(limits.maxSize) { throw tooLarge(declared: total, overflow: overflow, limits) }
            plans.append(plan)
            sources.append(index)
        }
        try checkAncestors(plans, kinds: kinds)
        try ZipLayout.checkOverlaps(ZipLayout.minimalSpans(central), directoryStart: end.directoryOffset)
        let local = try ZipLayout.readLocalHeaders(file, central)
        try ZipLayout.checkOverlaps(local.spans, directoryStart: end.directoryOffset)
        for (index, source) in sources.enumerated() { plans[index].dataOffset = local.dataOffsets[source] }
        return ZipCatalog(entries: plans)
    }

    private static func plan(_ entry: CentralEntry, allowSymlinks: Bool) throws -> ZipEntryPlan? {
        let name = try entry.decodedName()
        let shown = HaulError.printable(name)
        let type = (entry.unixMode ?? 0) & 0o170000
        guard let path = try EntryPath.normalize(name) else {
            guard name.endsWithSlash || type == 0o040000 else { throw HaulError.unsafeName(name, "names the destination itself but is not a directory") }
            return nil
        }
        if entry.isEncrypted {
            throw HaulError(
                HaulError.Code.encryptedEntry, "refusing archive: entry '\(shown)' is encrypted", hint: "Haul does not decrypt archives")
        }
        guard entry.method == 0 || entry.method == 8 else {
            throw HaulError(
                HaulError.Code.unsupportedMethod, "refusing archive: entry '\(shown)' uses compression method \(entry.method)",
                hint: "only stored (0) and deflate (8) are supported")
        }
        var kind = ZipEntryPlan.Kind.file
        if name.endsWithSlash || type == 0o040000 {
            guard entry.size == 0 else { throw HaulError.corrupt("directory entry '\(shown)' declares \(entry.size) bytes of content") }
            kind = .directory
        } else if type == 0o120000 {
            guard allowSymlinks else {
                throw HaulError(
                    HaulError.Code.symlinkRefused, "refusing archive: entry '\(shown)' is a symlink",
                    hint: "pass --allow-symlinks to create symlinks that stay inside the destination")
            }
            kind = .symlink
        } else if type != 0 && type != 0o100000 && type != 0o010000 {
            // A FIFO mode is what Info-ZIP records for data it read from a pipe (`zip - -`): its
            // content is a regular file's, and unzip writes it as one.
            throw HaulError(HaulError.Code.unsupportedEntry, "refusing archive: entry '\(shown)' is a device, FIFO or socket")
        }
        try checkDeclaredSize(entry, shown)
        let mtime = entry.modificationTime ?? DOSTime.unixTime(date: entry.dosDate, time: entry.dosTime)
        return ZipEntryPlan(
            path: path, kind: kind, method: entry.method, crc: entry.crc, compressedSize: entry.compressedSize, size: entry.size,
            dataOffset: 0, isExecutable: (entry.unixMode ?? 0) & 0o111 != 0, modificationTime: mtime)
    }

    /// Refuses an entry that declares more bytes than its compressed data could hold at deflate's
    /// ceiling (`ExtractionLimits.deflateCeiling` times; a stored entry holds exactly its own): no zip
    /// writer makes one, and its declared size would otherwise count against the limits and size the
    /// output before the inflater proves it false.
    static func checkDeclaredSize(_ entry: CentralEntry, _ shown: String) throws {
        let compressed = Int64(clamping: entry.compressedSize)
        guard RatioGuard.exceeds(Int64(clamping: entry.size), compressed, ExtractionLimits.deflateCeiling) else { return }
        throw HaulError(
            HaulError.Code.zipBomb,
            "refusing archive: entry '\(shown)' declares \(entry.size) bytes from \(compressed) compressed bytes, more than deflate can expand them (\(ExtractionLimits.deflateCeiling) times)",
            hint: "the archive is damaged or a zip bomb; nothing was kept")
    }

    /// Refuses entries that would live inside a file or a symlink of the same archive.
    static func checkAncestors(_ plans: [ZipEntryPlan], kinds: [String: ZipEntryPlan.Kind]) throws {
        for plan in plans {
            for ancestor in EntryPath.ancestors(of: plan.path) {
                switch kinds[ancestor] {
                case .file:
                    throw HaulError(
                        HaulError.Code.duplicateEntry,
                        "refusing archive: entry '\(HaulError.printable(plan.path))' lies inside '\(HaulError.printable(ancestor))', which is a file")
                case .symlink:
                    throw HaulError.unsafeName(plan.path, "lies under the symlink '\(HaulError.printable(ancestor))'")
                case .directory, nil:
                    continue
                }
            }
        }
    }

    static func tooManyEntries(_ count: UInt64, _ limits: Limits) -> HaulError {
        HaulError(
            HaulError.Code.tooManyEntries, "refusing archive: it has \(count) entries, more than the limit of \(limits.maxEntries)",
            hint: "raise --max-entries if the archive is trusted")
    }

    static func tooLarge(declared: UInt64, overflow: Bool, _ limits: Limits) -> HaulError {
        let size = overflow ? "more than 16 EiB" : ByteSize.format(Int64(clamping: declared))
        return HaulError(
            HaulError.Code.tooLarge, "refusing archive: it expands to \(size), more than the limit of \(ByteSize.format(limits.maxSize))",
            hint: limits.sizeHint)
    }
}
