import Foundation
import HaulArchive
import HaulCore
import HaulS3
import HaulStorage

/// `--extract` on S3 storage: the archive object is read once, front to back, with one `GET`, and
/// the extractor streams each entry, under the same hostile-archive rules as on POSIX storage,
/// into an object under the extract-to prefix (`ObjectEntrySink`). tar, tar.gz and gz are
/// extracted as they arrive; a zip (its central directory is at its end) is first copied to a
/// local spool file, unnamed, in the private `ScratchFolder` (the archive only, never its entries).
///
/// Each key is recorded in the worker's journal (the database, under the finalizing lease) before
/// it is written. A failed extraction deletes the recorded objects and forgets them; a finalizer
/// taking over from a crashed one first deletes what the earlier attempt recorded, then starts over.
struct ObjectExtraction {
    let store: ObjectStore
    let journal: any ExtractionJournal

    /// Extracts the archive object of `request` under its folder (relative to the storage
    /// prefix). - Returns: objects written.
    func run(_ request: ExtractionRequest, shouldCancel: @escaping @Sendable () -> Bool) throws -> Int {
        let transfer = request.transferID
        let dest = request.archive
        let folder = request.folder
        let earlier = try removeRecorded(transfer, shouldCancel: shouldCancel)
        if earlier > 0 { Log.info("removed the objects of an earlier extraction", [("transfer", String(transfer)), ("objects", String(earlier))]) }
        try refuseOthers(under: folder, dest: dest)
        let name = dest.lastSlashComponent.map(String.init) ?? "archive"
        let sink = ObjectEntrySink(
            client: store.client, prefix: S3Location(bucket: store.location.bucket, path: store.location.key(for: folder)),
            journal: journal, shouldCancel: shouldCancel)
        let summary: ExtractionSummary
        let reading: Extractor.Reading
        do {
            let reader = try ObjectReader(client: store.client, bucket: store.location.bucket, key: try store.key(for: dest))
            defer { reader.stop() }
            (summary, reading) = try Extractor.extract(
                stream: reader, name: name, size: request.size, spool: store.scratch.unnamedFile(), into: sink, limits: request.limits)
        } catch {
            let removed = (try? removeRecorded(transfer, shouldCancel: shouldCancel)) ?? 0
            Log.info("removed the objects of a failed extraction", [("transfer", String(transfer)), ("objects", String(removed))])
            guard let error = error as? HaulError else { throw error }
            throw HaulError(error.code, "extracting \(dest) into \(folder) was refused: \(error.message)", hint: error.hint, transient: error.isTransient)
        }
        Log.info(
            "extracted to S3",
            [
                ("transfer", String(transfer)), ("prefix", folder), ("objects", String(summary.files)), ("bytes", String(summary.bytes)),
                ("archive", reading == .streamed ? "streamed" : "spooled"),
            ])
        return summary.files
    }

    /// Refuses a prefix that holds objects already (once the transfer's own earlier ones are
    /// gone): as a POSIX destination must be missing or empty, an extraction never replaces or
    /// mixes with objects it did not write.
    private func refuseOthers(under folder: String, dest: String) throws {
        let prefix = store.location.key(for: folder)
        let slashed = prefix.isEmpty || prefix.endsWithSlash ? prefix : prefix + "/"
        guard let key = try store.client.firstKey(bucket: store.location.bucket, prefix: slashed) else { return }
        throw HaulError(
            .destinationNotEmpty,
            "extracting \(dest) into \(folder) was refused: the destination 's3://\(store.location.bucket)/\(slashed)' already holds objects (\(key))",
            hint: "choose a new --extract-to prefix, or remove the objects under it")
    }

    /// Deletes every object recorded for the transfer (aborting an upload left open), then
    /// forgets them. - Returns: how many.
    ///
    /// Stops, between two objects, once the lease is known to be lost: the records then stay for
    /// the finalizer that holds it now, which deletes them before it writes anything.
    private func removeRecorded(_ transfer: Int64, shouldCancel: () -> Bool) throws -> Int {
        let objects = try journal.recorded()
        guard !objects.isEmpty else { return 0 }
        for object in objects {
            if shouldCancel() { throw HaulError(.leaseLost, "another finalizer holds transfer \(transfer) now") }
            if let uploadID = object.uploadID { try store.client.abortUpload(bucket: store.location.bucket, key: object.key, uploadID: uploadID) }
            try store.client.deleteObject(bucket: store.location.bucket, key: object.key)
        }
        guard try journal.forgetRecorded() else { throw HaulError(.leaseLost, "another finalizer holds transfer \(transfer) now") }
        return objects.count
    }
}
