import Foundation
import HaulCore
import HaulQueue
import HaulS3
import HaulStorage

/// A storage root that is an S3 bucket (`s3://BUCKET[/PREFIX]`): a transfer's `dest` is the
/// key `PREFIX/dest`, each transfer is one multipart upload and each segment one part.
public struct ObjectStore: Sendable {
    /// The bucket and key prefix.
    public let location: S3Location
    /// The signed client for the service.
    public let client: S3Client
    /// The process's private folder for what must touch local disk (a zip archive to extract).
    public let scratch: ScratchFolder

    /// A store at `location`, reached with `client`, spooling into `scratch`.
    public init(location: S3Location, client: S3Client, scratch: ScratchFolder) {
        self.location = location
        self.client = client
        self.scratch = scratch
    }

    /// The object key of destination `dest`.
    public func key(for dest: String) throws -> String {
        location.key(for: try SafePath.validate(dest))
    }

    /// The storage a `--storage` / `-o` value names: a local directory, or an S3 location with
    /// the process's private scratch folder (`ScratchFolder`) as its local root. A URL-like value
    /// with another scheme is refused (exit 2), never taken as a local path. The bucket is
    /// checked at once, so missing or wrong credentials, another region or a missing bucket
    /// fail before any work is taken, with exit status 2 as a missing storage folder does (the
    /// user's setting to correct); a store that cannot be reached is a failure (exit 1).
    public static func storage(_ text: String, what: String) throws -> (root: StorageRoot, store: ObjectStore?) {
        guard S3Location.isURLLike(text) else { return (try StorageRoot(text), nil) }
        let location = try S3Location(parsing: text, what: what)
        let client: S3Client
        do {
            client = S3Client(config: try S3Config.fromEnvironment())
            try client.checkBucket(location.bucket, prefix: location.folder)
        } catch let error as HaulError where [.s3NoBucket, .s3Auth, .s3Credentials, .s3ExpiredToken, .s3Region].contains(error.code) {
            throw HaulError(.usage, error.message, hint: error.hint)
        }
        let scratch = try ScratchFolder(prefix: "haul-s3")
        return (try StorageRoot(scratch.path), ObjectStore(location: location, client: client, scratch: scratch))
    }
}

/// What a segment's upload sends along (S3 storage).
public enum ObjectPart {
    /// The bytes of expected digest `text` (`algorithm:hex`) when it is a sha256.
    public static func expectedSHA256(_ text: String?) -> [UInt8]? {
        guard let text, let expected = try? Checksum(parsing: text), expected.algorithm == .sha256 else { return nil }
        return expected.bytes
    }
}

/// When a file on S3 storage is one request.
public enum ObjectPlanning {
    /// Whether a file of `size` bytes is stored with one `PutObject` instead of a multipart
    /// upload: a known size below S3's part minimum (an empty file is put by the finalizer).
    public static func isSingleRequest(size: Int64?) -> Bool {
        guard let size else { return false }
        return size > 0 && size < S3PartRules.minimumPart
    }
}
