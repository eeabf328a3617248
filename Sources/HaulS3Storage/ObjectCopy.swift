import Foundation
import HaulCore
import HaulS3
import HaulStorage

/// A local copy of a stored object, for what needs a file (`--upload-to`): the object read back
/// once, streamed, into a file named like it in a fresh folder of the private `ScratchFolder`
/// (made and written through descriptors, `O_EXCL`, never following a link). `remove()` deletes both.
public struct ObjectCopy: Sendable {
    /// The copy, for the uploaders that open a file by path.
    public let path: String
    private let scratch: ScratchFolder
    private let folder: String
    private let name: String

    /// Reads the object of `dest` on `store` into a new local file; stops (and removes it) once `shouldStop` says so.
    public init(of dest: String, store: ObjectStore, shouldStop: @escaping () -> Bool) throws {
        let key = try store.key(for: dest)
        scratch = store.scratch
        folder = "copy-\(UInt64.random(in: 0...UInt64.max))"
        name = dest.lastSlashComponent.map(String.init) ?? dest
        path = scratch.path + "/" + folder + "/" + name
        guard mkdirat(scratch.descriptor, folder, 0o700) == 0 else { throw Self.failure("create a folder in", scratch.path) }
        let fd = Self.create(name, in: scratch.descriptor, folder: folder)
        guard fd >= 0 else {
            let error = Self.failure("create a file in", scratch.path)
            remove()
            throw error
        }
        defer { close(fd) }
        do {
            let total = try store.client.readObject(bucket: store.location.bucket, key: key) { bytes in
                var done = 0
                while done < bytes.count {
                    let wrote = write(fd, bytes.baseAddress! + done, bytes.count - done)
                    if wrote < 0 && errno == EINTR { continue }
                    guard wrote > 0 else { return false }
                    done += wrote
                }
                return !shouldStop()
            }
            if shouldStop() { throw HaulError(.canceled, "reading s3://\(store.location.bucket)/\(key) back was stopped", transient: true) }
            var attributes = stat()
            guard fstat(fd, &attributes) == 0, Int64(attributes.st_size) == total else {
                throw HaulError(.storage, "cannot copy s3://\(store.location.bucket)/\(key) to \(path): the copy is short", transient: true)
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Deletes the copy and its folder.
    public func remove() {
        let sub = openat(scratch.descriptor, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if sub >= 0 {
            unlinkat(sub, name, 0)
            close(sub)
        }
        unlinkat(scratch.descriptor, folder, AT_REMOVEDIR)
    }

    /// A new file `name` in `folder` of the directory `parent`, opened for writing; -1 on failure (see `errno`).
    private static func create(_ name: String, in parent: Int32, folder: String) -> Int32 {
        let sub = openat(parent, folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard sub >= 0 else { return -1 }
        defer { close(sub) }
        return openat(sub, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    }

    private static func failure(_ doing: String, _ place: String) -> HaulError {
        HaulError(.storage, "cannot \(doing) the scratch folder \(place): \(String(cString: strerror(errno)))")
    }
}
