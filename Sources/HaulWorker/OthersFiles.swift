import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// A fleet transfer the origin names, and a `haul get` without `--force`, must not replace a file
/// on the storage that no earlier transfer of its URL wrote: another URL's file the origin names
/// alike (`a/x.iso`, then `b/x.iso`), or one put there by hand. Which URL wrote a file is read
/// from the file's own mark (`SourceMark`; on S3, `ObjectSourceMark`), else from the transfer
/// history. The planner (for a get, the command too) asks before anything is written; the
/// finalizer asks again before it publishes, because a file may be put at the name while the
/// transfer downloads, or while it has failed and waits for a retry.
public enum OthersFiles {
    /// The finalizer's last look before it publishes `claim`'s file at `dest`: `refuse` for a
    /// transfer the origin named, and for a get that keeps existing files. An explicit `--dest`
    /// and `--force` are the user's word: they replace what is there.
    static func refuseBeforePublishing(_ dest: String, of claim: TransferLeases.Claim, config: WorkerConfig, database: ResilientConnection) throws {
        guard claim.info.options.namedByOrigin == true || claim.info.options.keepExisting == true else { return }
        try refuse(dest, of: claim, config: config, database: database)
    }

    /// - Throws: `destination-exists` when something is at `dest` that an earlier done transfer of
    ///   `claim`'s URL did not write; the file stays as it was. A get's refusal is `getRefusal`.
    static func refuse(_ dest: String, of claim: TransferLeases.Claim, config: WorkerConfig, database: ResilientConnection) throws {
        let info = claim.info
        // Where there are no marks, a get's file is its URL's if an earlier get saved it; a fleet
        // transfer's if an earlier fleet transfer of the URL wrote it.
        let isGet = info.options.localTarget != nil
        let wroteBefore = {
            try database.run { conn in
                try isGet
                    ? TransferStore(conn).getSaved(dest, url: info.url, options: info.options)
                    : TransferLeases(conn, workerID: config.workerID).urlWroteBefore(dest, of: claim)
            }
        }
        guard let target = try at(dest, url: info.url, storage: config.storage, store: config.objectStore, wroteBefore: wroteBefore) else { return }
        if isGet { throw getRefusal(target) }
        throw HaulError(
            .destinationExists, "'\(dest)' is already on the storage and no earlier transfer of this URL wrote it; haul leaves it alone",
            hint: "enqueue the URL again with its own --dest, or remove the file and run haul retry \(claim.info.id)")
    }

    /// The refusal a `haul get` without `--force` meets at `target`, what `at` found there.
    public static func getRefusal(_ target: String) -> HaulError {
        HaulError(
            .destinationExists, "'\(target)' already exists and haul did not download it from this URL; haul leaves it alone",
            hint: "pass --force to overwrite it, or -o PATH to save elsewhere")
    }

    /// What is at `dest` (beneath `storage`, or at its key on S3 storage `store`) without the mark
    /// of `url` (`SourceMark`, `ObjectSourceMark`): its path or `s3://` URL, `nil` when nothing
    /// is there or it is marked as downloaded from `url`. A symlink counts as something there.
    /// `wroteBefore` (whether the history says an earlier transfer of `url` wrote the file) is
    /// asked only where the file system keeps no marks: where it keeps them, a file without
    /// `url`'s mark is not that transfer's, whatever the history says (a file put in its place
    /// since). A failed object-store lookup throws rather than answer `nil`.
    public static func at(_ dest: String, url: String, storage: StorageRoot, store: ObjectStore?, wroteBefore: () throws -> Bool) throws -> String? {
        if let store {
            let key = try store.key(for: dest)
            guard let head = try store.client.objectHead(bucket: store.location.bucket, key: key), !ObjectSourceMark.says(head, cameFrom: url) else {
                return nil
            }
            return "s3://\(store.location.bucket)/\(key)"
        }
        let path = storage.path + "/" + dest
        var attributes = stat()
        guard lstat(path, &attributes) == 0 else { return nil }
        switch SourceMark.read(path, against: url) {
        case .thisURL: return nil
        case .unsupported: return try wroteBefore() ? nil : path
        case .anotherURL, .unmarked: return path
        }
    }
}
