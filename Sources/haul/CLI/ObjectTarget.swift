import HaulCore
import HaulS3
import HaulS3Storage
import HaulStorage
import HaulWorker

/// `haul get -o s3://BUCKET/KEY`: the key's folder as the storage prefix and its last part as
/// the destination (a key ending in `/`, or none, is a prefix: the object is named from the
/// origin like a file).
struct ObjectTarget {
    let root: StorageRoot
    let store: ObjectStore
    let dest: String?

    /// `nil` when `output` is not URL-like; refuses schemes other than `s3` (exit 2).
    static func parse(_ output: String?) throws -> ObjectTarget? {
        guard let output, S3Location.isURLLike(output) else { return nil }
        let location = try S3Location(parsing: output, what: "-o")
        // Like a local path: the key's folder is the root (where --extract-to is), its last part the name.
        let isPrefix = location.path.isEmpty || location.path.endsWithSlash
        let slash = location.path.lastSlashIndex
        let folder = isPrefix ? location.path : slash.map { String(location.path[...$0]) } ?? ""
        let name = isPrefix ? nil : String(decoding: location.path.utf8.dropFirst(folder.utf8.count), as: UTF8.self)
        let storage = try ObjectStore.storage("s3://\(location.bucket)/\(folder)", what: "-o")
        guard let store = storage.store else { return nil }
        return ObjectTarget(root: storage.root, store: store, dest: name)
    }
}
