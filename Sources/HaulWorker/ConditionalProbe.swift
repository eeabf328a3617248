import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// An incremental re-mirror's probe, shared by the lone planner and the batch probe: the
/// request asks only for a version newer than the one on storage, and a `304` keeps it.
enum ConditionalProbe {
    /// The version to ask against: the one an earlier transfer recorded, if its file is still on
    /// storage at that size, unwritten since it was published (for a transfer the origin names,
    /// at the name that transfer saved, and still its URL's: `isKept`); for `haul get -N`, the
    /// file on storage as it is now (its size, and its modification time as `If-Modified-Since`,
    /// as `wget -N` compares; on S3 storage the object's `Last-Modified`, when it was stored).
    /// - Parameter onStorage: the size of the file on storage now (`Planner.fileOnStorage`).
    static func baseline(
        recorded: TransferLeases.PreviousVersion?, onStorage: Int64?, info: TransferInfo, config: WorkerConfig
    ) -> TransferLeases.PreviousVersion? {
        guard info.options.timestamping == true else {
            guard let dest = info.dest else { return recorded.flatMap { isKept($0, url: info.url, config: config) ? $0 : nil } }
            // Nothing on storage is no baseline, and needs no look at a seal.
            guard let size = onStorage, size == recorded?.size, !changedSinceSealed(dest, config: config) else { return nil }
            return recorded
        }
        // -N compares with the file as it is now, whoever wrote it.
        guard let size = onStorage, let dest = info.dest else { return nil }
        guard let stored = (try? config.backend.probe(dest))??.lastModified else { return nil }
        return TransferLeases.PreviousVersion(etag: nil, lastModified: stored, size: size, dest: dest)
    }

    /// Whether the file `version` was saved as is still on storage at its size and still its
    /// URL's (`OthersFiles.at`: by its mark; where there are none, the history that found the
    /// version said no other URL saved a file there since). A lookup that fails counts as no.
    static func isKept(_ version: TransferLeases.PreviousVersion, url: String, config: WorkerConfig) -> Bool {
        guard let dest = try? SafePath.validate(version.dest) else { return false }
        do {
            guard let seen = try config.backend.unchangedFile(at: dest, size: version.size, url: url) else { return false }
            return try OthersFiles.at(dest, url: url, storage: config.backend, seen: seen) { true } == nil
        } catch {
            return false
        }
    }

    /// Whether the file at `dest` on POSIX storage was written since Haul published it
    /// (`SourceMark.changedSinceSealed`): then it is not the version the record describes, and
    /// is fetched whole (an object in a bucket is never changed in place).
    private static func changedSinceSealed(_ dest: String, config: WorkerConfig) -> Bool {
        config.backend.features.contains(.editableInPlace) && SourceMark.changedSinceSealed(config.storage.path + "/" + dest)
    }

    /// Whether `baseline` would use an earlier transfer's recorded version: not for `-N` (the file
    /// itself is compared), nor when no file is on storage (it is fetched whole whatever was
    /// recorded). Saves looking the record up for files that are new. A transfer the origin
    /// names looks it up to learn where its file would be.
    static func usesRecord(_ info: TransferInfo, onStorage: Int64?) -> Bool {
        info.options.timestamping != true && (onStorage != nil || info.dest == nil)
    }

    /// `haul get -N` against a file on storage: whether the origin's copy, whatever it answered
    /// (origins such as nginx answer `If-Modified-Since` with a 304 only for the exact time), is
    /// no newer than that file. The probe's body is then dropped, as a 304 would be.
    static func notNewer(_ head: ResponseHead, than previous: TransferLeases.PreviousVersion?, info: TransferInfo) -> Bool {
        guard info.options.timestamping == true, let previous, previous.etag == nil, (200..<300).contains(head.status),
            let origin = head["last-modified"].flatMap(parseHTTPDate), let local = previous.lastModified.flatMap(parseHTTPDate)
        else { return false }
        return origin <= local
    }

    /// Seconds since the epoch of an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`), if it is one.
    static func parseHTTPDate(_ text: String) -> Int? {
        let words = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard words.count == 6, words[5] == "GMT", let day = Int32(words[1]), let month = months.firstIndex(of: String(words[2])),
            let year = Int32(words[3])
        else { return nil }
        let clock = words[4].split(separator: ":").compactMap { Int32($0) }
        guard clock.count == 3 else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = Int32(month)
        parts.tm_mday = day
        parts.tm_hour = clock[0]
        parts.tm_min = clock[1]
        parts.tm_sec = clock[2]
        return timegm(&parts)
    }

    /// Adds `If-None-Match` / `If-Modified-Since` for the version an earlier transfer left.
    static func ask(_ request: inout FetchRequest, ifChangedSince previous: TransferLeases.PreviousVersion?) {
        if let etag = previous?.etag { request.headerLines.append("If-None-Match: \(etag)") }
        if let modified = previous?.lastModified { request.headerLines.append("If-Modified-Since: \(modified)") }
    }

    /// The version a `304` confirms: the earlier one, with whatever validators the answer
    /// refreshed. A `304` to a request that asked nothing is the origin's fault (retried).
    static func unchanged(_ head: ResponseHead, previous: TransferLeases.PreviousVersion?) throws -> TransferLeases.PreviousVersion {
        guard let previous else {
            throw HaulError(.originStatus, "origin answered 304 Not Modified to an unconditional request", transient: true)
        }
        // A file kept by -N is not the origin's: it keeps no validators of the origin's copy.
        guard previous.etag != nil || head.status == 304 else {
            return TransferLeases.PreviousVersion(etag: nil, lastModified: previous.lastModified, size: previous.size, dest: previous.dest)
        }
        return TransferLeases.PreviousVersion(
            etag: head.etag ?? previous.etag, lastModified: head["last-modified"] ?? previous.lastModified, size: previous.size, dest: previous.dest)
    }
}
