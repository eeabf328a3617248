import Foundation
import HaulArchive
import HaulCore
import HaulQueue
import HaulS3
import HaulStorage

/// `--extract` on S3 storage: the archive object is read back once into a scratch folder, the
/// extractor unpacks it there under the same hostile-archive rules as on POSIX storage, and each
/// entry becomes an object under the extract-to prefix. What was written is logged, and deleted
/// again if anything fails, so a failed extraction leaves no objects behind.
struct ObjectExtraction {
    let store: ObjectStore
    /// The worker's scratch directory (local disk for the archive and its entries, removed after).
    let scratch: String

    /// Extracts the object of `dest` under `folder` (relative to the storage prefix). - Returns: objects written.
    func run(dest: String, folder: String, transfer: Int64, shouldCancel: () -> Bool) throws -> Int {
        let work = scratch + "/extract-\(transfer)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let archive = work + "/archive"
        try download(key: try store.key(for: dest), to: archive)
        do {
            _ = try Extractor.extract(archive: archive, to: work + "/out")
        } catch let error as HaulError {
            throw HaulError(error.code, "extracting \(dest) into \(folder) was refused: \(error.message)", hint: error.hint, transient: error.isTransient)
        }
        unlink(archive)
        let entries = (FileManager.default.enumerator(atPath: work + "/out")?.allObjects as? [String] ?? []).sorted()
        var written: [String] = []
        do {
            for entry in entries {
                var attributes = stat()
                guard lstat(work + "/out/" + entry, &attributes) == 0, (attributes.st_mode & S_IFMT) == S_IFREG else { continue }
                let key = try store.key(for: folder + "/" + entry)
                _ = try ObjectUpload.store(work + "/out/" + entry, client: store.client, bucket: store.location.bucket, key: key, shouldCancel: shouldCancel)
                written.append(key)
            }
        } catch {
            for key in written { try? store.client.deleteObject(bucket: store.location.bucket, key: key) }
            throw error
        }
        Log.info("extracted to S3", [("transfer", String(transfer)), ("prefix", folder), ("objects", String(written.count))])
        return written.count
    }

    /// Streams the object to a local file.
    private func download(key: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Errno.storageError(errno, "create \(path)") }
        defer { close(fd) }
        var failure: Int32?
        try store.client.readObject(bucket: store.location.bucket, key: key) { bytes in
            var offset = 0
            while offset < bytes.count {
                let done = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if done < 0 && errno == EINTR { continue }
                guard done > 0 else {
                    failure = errno
                    return false
                }
                offset += done
            }
            return true
        }
        if let failure { throw Errno.storageError(failure, "write \(path)") }
    }
}
