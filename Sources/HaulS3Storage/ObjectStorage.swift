import HaulCore
import HaulS3
import HaulStorage

/// An S3 bucket as `Storage` (layout `s3`): a destination is the object `PREFIX/dest`.
extension ObjectStore: Storage {
    public var identity: String { location.description }

    public var features: StorageFeatures { [.atomicSegments, .objectLayout, .openUploads] }

    /// `s3://bucket/key` of a destination; of none (`""`, a name the origin gives), the prefix
    /// `s3://bucket/prefix/` itself, so that two prefixes are told apart.
    public func describe(_ dest: String) -> String {
        guard !dest.isEmpty else { return location.description }
        return "s3://\(location.bucket)/\((try? key(for: dest)) ?? dest)"
    }

    public func probe(_ dest: String) throws -> StoredFile? {
        guard let head = try client.objectHead(bucket: location.bucket, key: key(for: dest)) else { return nil }
        return StoredFile(size: head.size ?? 0, lastModified: head.lastModified)
    }

    public func occupant(of dest: String, url: String) throws -> Occupant? {
        guard let head = try client.objectHead(bucket: location.bucket, key: key(for: dest)) else { return nil }
        return try occupant(head, of: dest, url: url)
    }

    /// The occupant of `dest` that a lookup found (`head`), without asking again.
    public func occupant(_ head: S3Client.ObjectHead, of dest: String, url: String) throws -> Occupant {
        let mark: SourceMark.Reading =
            ObjectSourceMark.says(head, cameFrom: url) ? .thisURL : ObjectSourceMark.isMarked(head) ? .anotherURL : .unmarked
        return Occupant(location: "s3://\(location.bucket)/\(try key(for: dest))", mark: mark, isFolder: false)
    }

    public func unchangedFile(at dest: String, size: Int64, url: String) throws -> Occupant? {
        guard let head = try client.objectHead(bucket: location.bucket, key: key(for: dest)), head.size == size else { return nil }
        return try occupant(head, of: dest, url: url)
    }

    public func readBack(_ dest: String, shouldStop: @escaping @Sendable () -> Bool) throws -> LocalCopy {
        let copy = try ObjectCopy(of: dest, store: self, shouldStop: shouldStop)
        return LocalCopy(path: copy.path) { copy.remove() }
    }

    public func firstSegment(requested: Int64) -> Int64 {
        min(max(requested, S3PartRules.minimumPart), S3PartRules.maximumPart)
    }

    /// Parts of 5 MiB to 5 GiB except the last, at most 10 000 of them, for a file of at most
    /// 5 TiB (`S3PartRules`).
    public func segmentLength(for file: SegmentedFile) throws -> Int64? {
        guard let size = file.size else {
            throw HaulError(
                .s3UnknownSize, "the origin does not say how large \(file.dest) is, and an S3 upload needs sizes",
                hint: "store it on a POSIX storage root instead")
        }
        guard size <= S3PartRules.maximumObject else {
            throw HaulError(
                .s3TooLarge, "\(file.dest) is \(ByteSize.format(size)), larger than the 5 TiB an S3 object may hold",
                hint: "store it on a POSIX storage root instead")
        }
        if file.acceptsRanges { return S3PartRules.partSize(fileSize: size, first: file.first, requested: file.requested) }
        guard size <= S3PartRules.maximumPart else {
            throw HaulError(.s3TooLarge, "\(file.dest) is larger than 5 GiB and its origin cannot serve ranges, so it cannot be cut into S3 parts")
        }
        return nil
    }

    public func batchStore() -> any BatchStore { ObjectBatchStorage(store: self) }

    public func extract(_ request: ExtractionRequest, journal: any ExtractionJournal, shouldCancel: @escaping @Sendable () -> Bool) throws -> Int {
        try ObjectExtraction(store: self, journal: journal).run(request, shouldCancel: shouldCancel)
    }

    public func discard(_ dest: String) throws {
        try client.deleteObject(bucket: location.bucket, key: key(for: dest))
    }

    /// Opens the transfer's multipart upload, aborting the one an earlier plan opened (a
    /// restarted transfer starts its upload over). An empty file needs none (the finalizer puts
    /// it), nor does a file below the part minimum (its one segment is a `PutObject`).
    public func prepare(_ file: PlannedFile, intend: (StorageIntent) throws -> Void) throws -> PreparedFile {
        let key = try key(for: file.dest)
        if let earlier = file.earlierUploadID {
            try? client.abortUpload(bucket: location.bucket, key: file.earlierDest.flatMap { try? self.key(for: $0) } ?? key, uploadID: earlier)
        }
        guard file.hasSegments, file.unknownLength || !ObjectPlanning.isSingleRequest(size: file.size) else {
            return PreparedFile(dest: file.dest, uploadID: nil)
        }
        try intend(StorageIntent(container: location.bucket, name: key))
        let uploadID = try client.createUpload(
            bucket: location.bucket, key: key, contentType: file.contentType, metadata: ObjectSourceMark.metadata(for: file.url))
        return PreparedFile(dest: file.dest, uploadID: uploadID)
    }

    public func abandon(_ prepared: PreparedFile) {
        guard let uploadID = prepared.uploadID, let key = try? key(for: prepared.dest) else { return }
        try? client.abortUpload(bucket: location.bucket, key: key, uploadID: uploadID)
    }

    public func openUploads() throws -> OpenUploads? {
        let listed = try client.listUploads(bucket: location.bucket, prefix: location.folder)
        return OpenUploads(container: location.bucket, uploads: listed.map { OpenUpload(key: $0.key, uploadID: $0.uploadID, initiated: $0.initiated) })
    }

    public func abortUpload(_ uploadID: String, dest: String) throws {
        try client.abortUpload(bucket: location.bucket, key: key(for: dest), uploadID: uploadID)
    }

    public func abortUpload(_ upload: OpenUpload) throws {
        try client.abortUpload(bucket: location.bucket, key: upload.key, uploadID: upload.uploadID)
    }

    /// Starts the `UploadPart` of the segment (part number `index + 1`, its whole length), or the
    /// `PutObject` of a single-request file. A `PutObject` is conditional on the object as it is
    /// when the request starts, and carries the expected sha256 when there is one.
    public func openSegment(_ target: SegmentTarget, writer: SegmentWriter) throws -> any SegmentSink {
        let key = try key(for: target.dest)
        if target.uploadID == nil, target.index == 0, let length = target.length, ObjectPlanning.isSingleRequest(size: target.fileSize) {
            let put = try PartStream.putObject(
                client: client, bucket: location.bucket, key: key, length: length, sha256: ObjectPart.expectedSHA256(target.expectedDigest),
                contentType: target.contentType, metadata: ObjectSourceMark.metadata(for: target.url))
            return ObjectSegmentSink(put, wholeObject: true)
        }
        guard let uploadID = target.uploadID, let length = target.length else {
            throw HaulError(
                .s3NoUpload, "\(target.name) has no S3 upload to be a part of",
                hint: "was it planned by a worker on other storage? run \(target.retryCommand)")
        }
        let part = try PartStream(client: client, bucket: location.bucket, key: key, uploadID: uploadID, number: target.index + 1, length: length)
        return ObjectSegmentSink(part, wholeObject: false)
    }
}
