import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// A fleet transfer the origin names must not replace a file on the storage that no earlier
/// transfer of its URL wrote: another URL's file the origin names alike (`a/x.iso`, then
/// `b/x.iso`), or one put there by hand. Which URL wrote a file is read from the file's own mark
/// (`SourceMark`, on a POSIX root), else from the transfer history. The planner asks before
/// anything is written; the finalizer asks again before it publishes, because a transfer that
/// failed and is retried keeps its name while others may write that name meanwhile.
enum OthersFiles {
    /// - Throws: `destination-exists` when something is at `dest` that an earlier done transfer of
    ///   `claim`'s URL did not write; the file stays as it was.
    static func refuse(_ dest: String, of claim: TransferLeases.Claim, config: WorkerConfig, database: ResilientConnection) throws {
        guard try othersAt(dest, url: claim.info.url, config: config) else { return }
        let replaceable = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).urlWroteBefore(dest, of: claim) }
        guard !replaceable else { return }
        throw HaulError(
            .destinationExists, "'\(dest)' is already on the storage and no earlier transfer of this URL wrote it; haul leaves it alone",
            hint: "enqueue the URL again with its own --dest, or remove the file and run haul retry \(claim.info.id)")
    }

    /// Whether something (a file, folder or link) is at `dest` on the worker's storage that does
    /// not carry the mark of `url` (`SourceMark`, `ObjectSourceMark`); a failed object-store
    /// lookup throws rather than answer no.
    private static func othersAt(_ dest: String, url: String, config: WorkerConfig) throws -> Bool {
        if let store = config.objectStore {
            guard let head = try store.client.objectHead(bucket: store.location.bucket, key: store.key(for: dest)) else { return false }
            return !ObjectSourceMark.says(head, cameFrom: url)
        }
        let path = config.storage.path + "/" + dest
        var attributes = stat()
        return lstat(path, &attributes) == 0 && !SourceMark.says(path, cameFrom: url)
    }
}
