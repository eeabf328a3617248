import Foundation
import HaulArchive
import HaulCore
import HaulPostgres
import HaulQueue
import HaulS3

/// The finalizer's work on S3 storage: complete the multipart upload with the parts recorded
/// under the segments' lease fences (in order), check the object's size with `HEAD`, verify a
/// digest by reading the object back once, streamed. The object appears only when complete.
public struct ObjectFinalizer {
    let workerID: String
    let store: ObjectStore
    let database: any QueueDatabase
    /// The transfer's extraction limits, capped by the worker's.
    let extractionLimits: ExtractionLimits
    /// Throws `destination-exists` when the object at a destination is not the claim's to replace.
    let refuseOthers: (String, TransferLeases.Claim) throws -> Void

    /// A finalizer of worker `workerID`'s transfers on `store`.
    public init(
        workerID: String, store: ObjectStore, database: any QueueDatabase, extractionLimits: ExtractionLimits,
        refuseOthers: @escaping (String, TransferLeases.Claim) throws -> Void
    ) {
        self.workerID = workerID
        self.store = store
        self.database = database
        self.extractionLimits = extractionLimits
        self.refuseOthers = refuseOthers
    }

    /// Publishes the object unless an earlier attempt did, then extracts it if asked; returns the
    /// digest to record. (`--upload-to` is the worker's: it uploads an `ObjectCopy`.)
    public func finalize(_ claim: TransferLeases.Claim, keeper: any FinalizingLease) throws -> String? {
        guard let dest = claim.info.dest else { throw HaulError(.unplanned, "transfer \(claim.info.id) has no destination") }
        let progress = try database.run(patient: false) { conn in try leases(conn).progress(of: claim) }
        let digest =
            progress.published
            ? try database.run(patient: false) { conn in try leases(conn).publishedDigest(of: claim) } : try publish(claim, dest: dest, keeper: keeper)
        if claim.info.options.extract == true, !progress.extracted {
            let folder = try SafePath.validate(claim.info.options.extractTo ?? Extractor.defaultFolder(for: dest), what: "--extract-to")
            let extraction = ObjectExtraction(store: store, database: database, workerID: workerID, limits: extractionLimits)
            _ = try extraction.run(claim, dest: dest, folder: folder) { keeper.isLost }
            try keeper.check()
            try database.run(patient: true) { conn in try leases(conn).markExtracted(claim) }
        }
        return digest
    }

    /// Completes the upload and checks the object; returns the digest to record.
    private func publish(_ claim: TransferLeases.Claim, dest: String, keeper: any FinalizingLease) throws -> String? {
        let key = try store.key(for: dest)
        let parts = try database.run(patient: false) { conn in try leases(conn).partETags(of: claim) }
        let size = claim.info.size ?? 0
        let bucket = store.location.bucket
        try keeper.renew()
        // The object's HEAD when a check below has asked for it already.
        var head: S3Client.ObjectHead?
        // Where the object this one replaces was copied until the new one is verified.
        var kept: String?
        if parts.isEmpty {
            try store.client.putObject(
                bucket: bucket, key: key, fd: -1, length: 0, contentType: claim.info.contentType, metadata: ObjectSourceMark.metadata(for: claim.info.url))
        } else if let uploadID = claim.info.objectUploadID {
            let recorded = parts.compactMap { part in part.etag.map { (number: part.index + 1, etag: $0) } }
            guard recorded.count == parts.count else {
                throw HaulError(.s3PartMissing, "a segment of \(dest) was completed without an S3 part", hint: "run \(claim.info.retryCommand)")
            }
            try refuseOthers(dest, claim)
            if claim.info.expectedDigest != nil { kept = try keepAside(key, of: claim, parts: recorded.map(\.etag)) }
            do {
                try store.client.completeUpload(bucket: bucket, key: key, uploadID: uploadID, parts: recorded)
            } catch let error as HaulError where error.code == .s3NoUpload {
                // An earlier finalizer may have completed it and lost its lease before saying so:
                // then the object's ETag is the one these parts make, which one put there by
                // anybody else (even of the same size) does not have. Otherwise the parts are
                // gone and the transfer starts over.
                head = try store.client.objectHead(bucket: bucket, key: key)
                guard let stored = head?.etag, ObjectETag.matches(stored, parts: recorded.map(\.etag)) else { throw error }
            }
            try database.run(patient: true) { conn in try leases(conn).forgetObjectUpload(claim) }
        } else {
            // One PutObject stored it (a file of one part): the object must still be the one it
            // stored, by its ETag (unless the store sent none), not one put there by anybody else since.
            head = try store.client.objectHead(bucket: bucket, key: key)
            let recorded = parts.first?.etag ?? ""
            let itsOwn = recorded.isEmpty || head?.etag.map { ObjectETag.same($0, recorded) } == true
            guard head != nil, itsOwn else {
                throw HaulError(
                    .s3UploadLost, "the object s3://\(bucket)/\(key) this transfer stored is gone or was replaced",
                    hint: "it starts over; or run \(claim.info.retryCommand)", transient: true)
            }
        }
        let stored = try (head ?? store.client.objectHead(bucket: bucket, key: key))?.size
        guard stored == size else {
            throw HaulError(
                .sizeMismatch, "s3://\(bucket)/\(key) holds \(stored.map(String.init) ?? "no") bytes but the origin announced \(size)",
                hint: "run \(claim.info.retryCommand)")
        }
        let digest: String?
        do {
            digest = try verifyDigest(claim, key: key, keeper: keeper)
        } catch let error as HaulError where error.code == .checksumMismatch {
            // Never leave a wrong object under the name: the one it replaced is put back.
            if let kept {
                try store.client.copyObject(bucket: bucket, from: kept, to: key)
                try store.client.deleteObject(bucket: bucket, key: kept)
            } else {
                try? store.client.deleteObject(bucket: bucket, key: key)
            }
            throw error
        }
        if let kept { try? store.client.deleteObject(bucket: bucket, key: kept) }
        guard try database.run(patient: true, { conn in try leases(conn).markPublished(claim, digest: digest) }) else {
            throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now")
        }
        return digest
    }

    /// Before a multipart upload replaces the object at `key` (`--force`) with bytes whose digest
    /// is still to be verified, copies that object to `KEY.haul-kept-ID` on the store, so that a
    /// mismatch puts it back as it was. A copy an earlier attempt made is kept; an object that is
    /// already this upload's (`parts` make its ETag: an earlier attempt completed it) is not
    /// copied. - Returns: the copy's key, `nil` when nothing is to be kept.
    private func keepAside(_ key: String, of claim: TransferLeases.Claim, parts: [String]) throws -> String? {
        let bucket = store.location.bucket
        let kept = "\(key).haul-kept-\(claim.info.id)"
        if try store.client.objectHead(bucket: bucket, key: kept) != nil { return kept }
        guard let head = try store.client.objectHead(bucket: bucket, key: key) else { return nil }
        if let etag = head.etag, ObjectETag.matches(etag, parts: parts) { return nil }
        try store.client.copyObject(bucket: bucket, from: key, to: kept)
        return kept
    }

    /// Reads the object back once, streamed, when a digest is asked for.
    private func verifyDigest(_ claim: TransferLeases.Claim, key: String, keeper: any FinalizingLease) throws -> String? {
        guard let algorithm = claim.info.digestAlgorithm else { return nil }
        let digester = Digester(algorithm)
        try store.client.readObject(bucket: store.location.bucket, key: key) { bytes in
            digester.update(bytes)
            return !keeper.isLost
        }
        try keeper.check()
        return try claim.info.verified(digester.finish())
    }

    private func leases(_ conn: PostgresConnection) -> TransferLeases { TransferLeases(conn, workerID: workerID) }
}
