import Foundation
import HaulCore
import HaulS3
import HaulStorage

/// Publishing in a bucket: complete the multipart upload with the parts recorded under the
/// segments' lease fences (in order), check the object's size with `HEAD`, verify a digest by
/// reading the object back once, streamed. The object appears only when complete.
extension ObjectStore {
    /// Completes the upload (or puts an empty object, or confirms the one `PutObject` stored)
    /// and checks the object. A replaced object is kept aside until the new one is verified and
    /// put back when its digest differs. - Returns: the digest to record.
    public func publish(_ file: FinishedFile, fence: any PublishFence) throws -> String? {
        let key = try key(for: file.dest)
        let parts = file.segments.sorted { $0.index < $1.index }
        let size = file.announcedSize ?? 0
        let bucket = location.bucket
        try fence.renew()
        // The object's HEAD when a check below has asked for it already.
        var head: S3Client.ObjectHead?
        // Where the object this one replaces was copied until the new one is verified.
        var kept: String?
        if parts.isEmpty {
            try client.putObject(bucket: bucket, key: key, fd: -1, length: 0, contentType: file.contentType, metadata: ObjectSourceMark.metadata(for: file.url))
        } else if let uploadID = file.uploadID {
            let recorded = parts.compactMap { part in part.etag.map { (number: part.index + 1, etag: $0) } }
            guard recorded.count == parts.count else {
                throw HaulError(.s3PartMissing, "a segment of \(file.dest) was completed without an S3 part", hint: "run \(file.retryCommand)")
            }
            try fence.refuseOthers()
            if file.expectsDigest { kept = try keepAside(key, of: file, parts: recorded.map(\.etag)) }
            do {
                try client.completeUpload(bucket: bucket, key: key, uploadID: uploadID, parts: recorded)
            } catch let error as HaulError where error.code == .s3NoUpload {
                // An earlier finalizer may have completed it and lost its lease before saying so:
                // then the object's ETag is the one these parts make, which one put there by
                // anybody else (even of the same size) does not have. Otherwise the parts are
                // gone and the transfer starts over.
                head = try client.objectHead(bucket: bucket, key: key)
                guard let stored = head?.etag, ObjectETag.matches(stored, parts: recorded.map(\.etag)) else { throw error }
            }
            try fence.record(.uploadCompleted)
        } else {
            // One PutObject stored it (a file of one part): the object must still be the one it
            // stored, by its ETag (unless the store sent none), not one put there by anybody else since.
            head = try client.objectHead(bucket: bucket, key: key)
            let recorded = parts.first?.etag ?? ""
            let itsOwn = recorded.isEmpty || head?.etag.map { ObjectETag.same($0, recorded) } == true
            guard head != nil, itsOwn else {
                throw HaulError(
                    .s3UploadLost, "the object s3://\(bucket)/\(key) this transfer stored is gone or was replaced",
                    hint: "it starts over; or run \(file.retryCommand)", transient: true)
            }
        }
        let stored = try (head ?? client.objectHead(bucket: bucket, key: key))?.size
        guard stored == size else {
            throw HaulError(
                .sizeMismatch, "s3://\(bucket)/\(key) holds \(stored.map(String.init) ?? "no") bytes but the origin announced \(size)",
                hint: "run \(file.retryCommand)")
        }
        let digest: String?
        do {
            digest = try verifyDigest(file, key: key, fence: fence)
        } catch let error as HaulError where error.code == .checksumMismatch {
            // Never leave a wrong object under the name: the one it replaced is put back.
            if let kept {
                try client.copyObject(bucket: bucket, from: kept, to: key)
                try client.deleteObject(bucket: bucket, key: kept)
            } else {
                try? client.deleteObject(bucket: bucket, key: key)
            }
            throw error
        }
        if let kept { try? client.deleteObject(bucket: bucket, key: kept) }
        return digest
    }

    /// Before a multipart upload replaces the object at `key` (`--force`) with bytes whose digest
    /// is still to be verified, copies that object to `KEY.haul-kept-ID` on the store, so that a
    /// mismatch puts it back as it was. A copy an earlier attempt made is kept; an object that is
    /// already this upload's (`parts` make its ETag: an earlier attempt completed it) is not
    /// copied. - Returns: the copy's key, `nil` when nothing is to be kept.
    private func keepAside(_ key: String, of file: FinishedFile, parts: [String]) throws -> String? {
        let bucket = location.bucket
        let kept = "\(key).haul-kept-\(file.transferID)"
        if try client.objectHead(bucket: bucket, key: kept) != nil { return kept }
        guard let head = try client.objectHead(bucket: bucket, key: key) else { return nil }
        if let etag = head.etag, ObjectETag.matches(etag, parts: parts) { return nil }
        try client.copyObject(bucket: bucket, from: key, to: kept)
        return kept
    }

    /// Reads the object back once, streamed, when a digest is asked for.
    private func verifyDigest(_ file: FinishedFile, key: String, fence: any PublishFence) throws -> String? {
        guard let algorithm = file.digestAlgorithm else { return nil }
        let digester = Digester(algorithm)
        try client.readObject(bucket: location.bucket, key: key) { bytes in
            digester.update(bytes)
            return !fence.isLost
        }
        try fence.check()
        return try fence.verify(digester.finish())
    }
}
