import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// A transfer must not replace a file on the storage that is not its own to replace. Which URL
/// wrote a file is read from the file's own mark (`SourceMark`; on S3, `ObjectSourceMark`), else,
/// where the file system keeps no marks, from the transfer history. What a transfer may replace
/// (`protection`):
///
/// - a fleet transfer the origin names, and a `haul get` without `--force`: only an earlier copy
///   of its own URL, never another URL's file the origin names alike (`a/x.iso`, then
///   `b/x.iso`) nor one put there by hand;
/// - a fleet transfer with an explicit `--dest`: any file Haul published (a re-mirror, also of a
///   new URL for the same name), never one Haul did not write;
/// - `haul enqueue --force`, `haul retry --force` and `haul get --force`: anything.
///
/// The planner (for a get, the command too) asks before anything is written; the finalizer, and
/// a small-file batch, ask again before they publish, because a file may be put at the name
/// while the transfer downloads, or while it has failed and waits for a retry.
public enum OthersFiles {
    /// Whose file at its destination a transfer may replace.
    public enum Replacing: Sendable, Equatable {
        /// Only a file of its own URL.
        case sameURL
        /// Any file Haul published, whatever its URL.
        case anyHaulFile
    }

    /// What the transfer `info` may replace at its destination; `nil`: anything.
    static func protection(of info: TransferInfo) -> Replacing? {
        if info.options.localTarget != nil { return info.options.keepExisting == true ? .sameURL : nil }
        if info.options.replaceExisting == true { return nil }
        return info.dest == nil || info.options.namedByOrigin == true ? .sameURL : .anyHaulFile
    }

    /// - Throws: `destination-exists` when something is at `dest` that `claim`'s transfer may not
    ///   replace (`protection`); the file stays as it was. A get's refusal is `getRefusal`.
    /// - Parameter seen: what is at `dest` as a lookup just found it (not asked again).
    static func refuse(
        _ dest: String, of claim: TransferLeases.Claim, config: WorkerConfig, database: ResilientConnection, seen: Occupant? = nil
    ) throws {
        let info = claim.info
        guard let protection = protection(of: info) else { return }
        // Where there are no marks: a get's file is its URL's if an earlier get saved it; a fleet
        // transfer's if an earlier fleet transfer of the URL (of any URL, for an explicit --dest) wrote it.
        let isGet = info.options.localTarget != nil
        let wroteBefore = {
            try database.run { conn in
                let leases = TransferLeases(conn, workerID: config.workerID)
                if isGet { return try TransferStore(conn).getSaved(dest, url: info.url, options: info.options) }
                return try protection == .sameURL ? leases.urlWroteBefore(dest, of: claim) : leases.destWrittenBefore(dest, of: claim)
            }
        }
        guard
            let target = try at(
                dest, url: info.url, storage: config.backend, replacing: protection, seen: seen, wroteBefore: wroteBefore)
        else { return }
        if isGet { throw getRefusal(target) }
        if protection == .anyHaulFile {
            throw HaulError(
                .destinationExists, "'\(dest)' is already on the storage and haul did not write it; haul leaves it alone",
                hint: "remove it and run haul retry \(claim.info.id), or replace it: haul retry \(claim.info.id) --force")
        }
        throw HaulError(
            .destinationExists, "'\(dest)' is already on the storage and no earlier transfer of this URL wrote it; haul leaves it alone",
            hint: "enqueue the URL again with its own --dest, or remove the file and run haul retry \(claim.info.id) (--force replaces it)")
    }

    /// The refusal a `haul get` without `--force` meets at `target`, what `at` found there.
    public static func getRefusal(_ target: String) -> HaulError {
        HaulError(
            .destinationExists, "'\(target)' already exists and haul did not download it from this URL; haul leaves it alone",
            hint: "pass --force to overwrite it, or -o PATH to save elsewhere")
    }

    /// What is at `dest` on `storage` (`Storage.occupant`) that a transfer
    /// of `url` may not replace: its path or `s3://` URL; `nil` when nothing is there, or it is
    /// marked as downloaded from `url` (`SourceMark`, `ObjectSourceMark`), or, `replacing`
    /// `.anyHaulFile`, from any URL. A symlink counts as something there. `wroteBefore` (whether
    /// the history says Haul wrote the file) is asked only where the file system keeps no marks:
    /// where it keeps them, a file without the mark is not Haul's, whatever the history says (a
    /// file put in its place since). A failed object-store lookup throws rather than answer `nil`;
    /// `seen` is the occupant when the caller looked it up already.
    public static func at(
        _ dest: String, url: String, storage: any Storage, replacing: Replacing = .sameURL, seen: Occupant? = nil, wroteBefore: () throws -> Bool
    ) throws -> String? {
        try judge(seen ?? storage.occupant(of: dest, url: url), replacing: replacing, wroteBefore: wroteBefore)
    }

    /// What `at` answers when `found` is what is at the destination (`nil`: nothing).
    static func judge(_ found: Occupant?, replacing: Replacing = .sameURL, wroteBefore: () throws -> Bool) throws -> String? {
        guard let found else { return nil }
        switch found.mark {
        case .thisURL: return nil
        case .anotherURL: return replacing == .anyHaulFile ? nil : found.location
        case .unsupported: return try wroteBefore() ? nil : found.location
        case .unmarked:
            // A folder is not replaced by a rename: publishing fails on it saying what to move.
            return replacing == .anyHaulFile && found.isFolder ? nil : found.location
        }
    }
}
