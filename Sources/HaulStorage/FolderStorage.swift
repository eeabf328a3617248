import Foundation
import HaulArchive
import HaulCore

/// A folder as `Storage` (layouts `inplace` and `parts`): a destination is the file
/// `ROOT/dest`, written through `StorageRoot`'s rules (no link followed out of the root).
public struct FolderStorage: Storage {
    /// The folder.
    public let root: StorageRoot

    /// The storage of folder `root`.
    public init(root: StorageRoot) { self.root = root }

    public var identity: String { "file://" + root.path }

    public var features: StorageFeatures { [.localSpace, .editableInPlace] }

    public func describe(_ dest: String) -> String { root.path + "/" + dest }

    public func probe(_ dest: String) throws -> StoredFile? {
        let path = root.path + "/" + (try SafePath.validate(dest))
        var attributes = stat()
        guard stat(path, &attributes) == 0 else {
            guard errno == ENOENT || errno == ENOTDIR else { throw Errno.storageError(errno, "look at \(path)") }
            return nil
        }
        return StoredFile(size: Int64(attributes.st_size), lastModified: Self.httpDate(attributes.st_mtim.tv_sec))
    }

    public func occupant(of dest: String, url: String) throws -> Occupant? {
        let path = root.path + "/" + dest
        var attributes = stat()
        guard lstat(path, &attributes) == 0 else { return nil }
        return Occupant(location: path, mark: SourceMark.read(path, against: url), isFolder: attributes.st_mode & S_IFMT == S_IFDIR)
    }

    public func unchangedFile(at dest: String, size: Int64, url: String) throws -> Occupant? {
        let path = root.path + "/" + (try SafePath.validate(dest))
        var attributes = stat()
        guard stat(path, &attributes) == 0, Int64(attributes.st_size) == size, attributes.st_mode & S_IFMT == S_IFREG,
            !SourceMark.changedSinceSealed(path)
        else { return nil }
        return try occupant(of: dest, url: url)
    }

    public func readBack(_ dest: String, shouldStop: @escaping @Sendable () -> Bool) throws -> LocalCopy {
        LocalCopy(path: root.path + "/" + (try SafePath.validate(dest)))
    }

    public func firstSegment(requested: Int64) -> Int64 { requested }

    public func segmentLength(for file: SegmentedFile) throws -> Int64? { nil }

    public func batchStore() -> any BatchStore { FolderBatchStore(storage: self, root: OpenedRoot(root)) }

    public func extract(_ request: ExtractionRequest, journal: any ExtractionJournal, shouldCancel: @escaping @Sendable () -> Bool) throws -> Int {
        let file = try TransferFiles(root: root, relative: request.archive).destination
        let target = try root.prepare(request.folder)
        do {
            let summary = try Extractor.extract(archive: file, to: target, limits: request.limits)
            Log.info(
                "extracted",
                [("transfer", String(request.transferID)), ("to", request.folder), ("files", String(summary.files)), ("bytes", String(summary.bytes))])
            return summary.files
        } catch let error as HaulError {
            throw HaulError(
                error.code, "extracting \(request.archive) into \(request.folder) was refused: \(error.message)", hint: error.hint,
                transient: error.isTransient)
        }
    }

    public func discard(_ dest: String) throws {
        let path = root.path + "/" + (try SafePath.validate(dest))
        guard unlink(path) == 0 || errno == ENOENT else { throw Errno.storageError(errno, "remove \(path)") }
    }

    public func prepare(_ file: PlannedFile, intend: (StorageIntent) throws -> Void) throws -> PreparedFile {
        if file.inplace && file.hasSegments {
            try TransferFiles(root: root, relative: file.dest).preparePartial(
                size: file.size, generation: file.generation, url: file.url, holding: file.holding)
        }
        return PreparedFile(dest: file.dest, uploadID: nil)
    }

    public func abandon(_ prepared: PreparedFile) {}

    public func openUploads() throws -> OpenUploads? { nil }

    public func abortUpload(_ uploadID: String, dest: String) throws {}

    public func abortUpload(_ upload: OpenUpload) throws {}

    public func openSegment(_ target: SegmentTarget, writer: SegmentWriter) throws -> any SegmentSink {
        let files = try TransferFiles(root: root, relative: target.dest)
        if target.partFiles {
            let name = TransferFiles.partName(relativeDest: target.dest, generation: target.generation, index: target.index, lease: target.lease)
            try Directories.create(files.partsDirectory)
            try writer.open(path: root.path + "/" + name, offset: 0, create: true, root: root)
            return FileSegmentSink(writer: writer, partPath: name)
        }
        if let held = target.holding { try files.holdPartial(generation: target.generation, in: held) }
        try files.confirmPartial(generation: target.generation, url: target.url)
        try writer.open(path: files.partial(generation: target.generation), offset: target.offset + target.resumeAt, create: false, root: root)
        return FileSegmentSink(writer: writer, partPath: nil)
    }

    /// `seconds` since the epoch as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
    public static func httpDate(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        return String(
            format: "%@, %02d %@ %04d %02d:%02d:%02d GMT", days[Int(parts.tm_wday)], parts.tm_mday, months[Int(parts.tm_mon)], Int(parts.tm_year) + 1900,
            parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
