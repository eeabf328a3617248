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

    /// The segment ranges for S3: parts of 5 MiB to 5 GiB except the last, at most 10 000 of them,
    /// for a file of at most 5 TiB.
    /// - Parameter first: the length of the first part (its request is already streaming).
    /// - Throws: when the size is unknown or an origin without ranges sends more than one part may hold.
    public static func fit(_ plan: TransferLeases.Plan, first: Int64, requested: Int64) throws -> TransferLeases.Plan {
        guard !plan.ranges.isEmpty else { return plan }
        guard let size = plan.size, !plan.unknownLength else {
            throw HaulError(
                .s3UnknownSize, "the origin does not say how large \(plan.dest) is, and an S3 upload needs sizes",
                hint: "store it on a POSIX storage root instead")
        }
        guard size <= S3PartRules.maximumObject else {
            throw HaulError(
                .s3TooLarge, "\(plan.dest) is \(ByteSize.format(size)), larger than the 5 TiB an S3 object may hold",
                hint: "store it on a POSIX storage root instead")
        }
        var fitted = plan
        if plan.acceptsRanges {
            let part = S3PartRules.partSize(fileSize: size, first: first, requested: requested)
            fitted.ranges = SegmentPlan(size: size, firstSegment: first, segmentSize: part).ranges
        } else if size > S3PartRules.maximumPart {
            throw HaulError(.s3TooLarge, "\(plan.dest) is larger than 5 GiB and its origin cannot serve ranges, so it cannot be cut into S3 parts")
        }
        return fitted
    }
}

/// What a segment's upload sends along (S3 storage).
public enum ObjectPart {
    /// The expected digest's bytes when it is a sha256 (the one digest S3 checks on a `PutObject`).
    public static func expectedSHA256(_ info: TransferInfo) -> [UInt8]? { expectedSHA256(info.expectedDigest) }

    /// The bytes of expected digest `text` (`algorithm:hex`) when it is a sha256.
    public static func expectedSHA256(_ text: String?) -> [UInt8]? {
        guard let text, let expected = try? Checksum(parsing: text), expected.algorithm == .sha256 else { return nil }
        return expected.bytes
    }
}

/// The planner's hooks for S3 storage.
public enum ObjectPlanning {
    /// The first segment's length: the transfer's segment size, within S3's part limits.
    public static func firstSegment(_ info: TransferInfo, store: ObjectStore?) -> Int64 {
        store?.firstSegment(requested: info.segmentSize) ?? info.segmentSize
    }

    /// Whether a file of `size` bytes is stored with one `PutObject` instead of a multipart
    /// upload: a known size below S3's part minimum (an empty file is put by the finalizer).
    public static func isSingleRequest(size: Int64?) -> Bool {
        guard let size else { return false }
        return size > 0 && size < S3PartRules.minimumPart
    }

    /// `plan` cut into valid S3 parts (unchanged on POSIX storage).
    public static func fit(_ plan: TransferLeases.Plan, info: TransferInfo, store: ObjectStore?) throws -> TransferLeases.Plan {
        guard store != nil else { return plan }
        return try ObjectStore.fit(plan, first: firstSegment(info, store: store), requested: info.segmentSize)
    }
}
