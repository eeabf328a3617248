import Foundation
import HaulArchive
import HaulCore
import HaulQueue
import HaulS3
import HaulStorage
import Synchronization

/// `--extract` on S3 storage: the archive object is read once, front to back, with one `GET`, and
/// the extractor streams each entry, under the same hostile-archive rules as on POSIX storage,
/// into an object under the extract-to prefix (`ObjectEntrySink`). tar, tar.gz and gz are
/// extracted as they arrive; a zip (its central directory is at its end) is first copied to a
/// local spool file, unnamed, in the private `ScratchFolder` (the archive only, never its entries).
///
/// Each key is recorded in the database under the finalizing lease before it is written. A failed
/// extraction deletes the recorded objects and forgets them; a finalizer taking over from a
/// crashed one first deletes what the earlier attempt recorded, then starts over.
public struct ObjectExtraction {
    let store: ObjectStore
    let database: any QueueDatabase
    let workerID: String
    let limits: ExtractionLimits

    /// An extraction by worker `workerID` into `store`, within `limits`, recording on `database`.
    public init(store: ObjectStore, database: any QueueDatabase, workerID: String, limits: ExtractionLimits) {
        self.store = store
        self.database = database
        self.workerID = workerID
        self.limits = limits
    }

    /// Extracts the object of `dest` under `folder` (relative to the storage prefix). - Returns: objects written.
    public func run(_ claim: TransferLeases.Claim, dest: String, folder: String, shouldCancel: @escaping @Sendable () -> Bool) throws -> Int {
        let transfer = claim.info.id
        let earlier = try removeRecorded(claim, shouldCancel: shouldCancel)
        if earlier > 0 { Log.info("removed the objects of an earlier extraction", [("transfer", String(transfer)), ("objects", String(earlier))]) }
        try refuseOthers(under: folder, dest: dest)
        let name = dest.lastSlashComponent.map(String.init) ?? "archive"
        let journal = Journal(database: database, workerID: workerID, claim: claim)
        let sink = ObjectEntrySink(
            client: store.client, prefix: S3Location(bucket: store.location.bucket, path: store.location.key(for: folder)),
            journal: journal, shouldCancel: shouldCancel)
        let summary: ExtractionSummary
        let reading: Extractor.Reading
        do {
            let reader = try ObjectReader(client: store.client, bucket: store.location.bucket, key: try store.key(for: dest))
            defer { reader.stop() }
            (summary, reading) = try Extractor.extract(
                stream: reader, name: name, size: claim.info.size ?? 0, spool: store.scratch.unnamedFile(), into: sink, limits: limits)
        } catch {
            let removed = (try? removeRecorded(claim, shouldCancel: shouldCancel)) ?? 0
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
    private func removeRecorded(_ claim: TransferLeases.Claim, shouldCancel: () -> Bool) throws -> Int {
        let objects = try database.run(patient: true) { conn in try TransferLeases(conn, workerID: workerID).extractedObjects(of: claim) }
        guard !objects.isEmpty else { return 0 }
        for object in objects {
            if shouldCancel() { throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now") }
            if let uploadID = object.uploadID { try store.client.abortUpload(bucket: store.location.bucket, key: object.key, uploadID: uploadID) }
            try store.client.deleteObject(bucket: store.location.bucket, key: object.key)
        }
        guard try database.run(patient: true, { conn in try TransferLeases(conn, workerID: workerID).forgetExtractedObjects(claim) }) else {
            throw HaulError(.leaseLost, "another finalizer holds transfer \(claim.info.id) now")
        }
        return objects.count
    }
}

/// Records extracted keys and their open uploads one at a time (zip entries are written by
/// several threads; the connection is not shared).
private final class Journal: ExtractionJournal, @unchecked Sendable {
    private let database: any QueueDatabase
    private let workerID: String
    private let claim: TransferLeases.Claim
    private let lock = Mutex<Void>(())

    init(database: any QueueDatabase, workerID: String, claim: TransferLeases.Claim) {
        self.database = database
        self.workerID = workerID
        self.claim = claim
    }

    func record(_ key: String) throws -> Bool {
        try locked { leases, claim in try leases.recordExtractedObject(claim, key: key) }
    }

    func recordUpload(_ key: String, uploadID: String?) throws -> Bool {
        try locked { leases, claim in try leases.recordExtractedUpload(claim, key: key, uploadID: uploadID) }
    }

    /// Runs `write` on the journal's connection, one writer at a time.
    private func locked(_ write: (TransferLeases, TransferLeases.Claim) throws -> Bool) throws -> Bool {
        try lock.withLock { _ in
            try database.run(patient: true) { conn in try write(TransferLeases(conn, workerID: workerID), claim) }
        }
    }
}
