import Foundation
import HaulCore
import HaulS3

/// `--upload-to s3://BUCKET/KEY`: re-uploads a finished file from POSIX storage as an object,
/// with the worker's S3 credentials. Up to 64 MiB in one `PutObject`; larger files as a
/// multipart upload read part by part from the file (aborted if it fails, so nothing is left).
public enum ObjectUpload {
    static let singleRequestLimit: Int64 = 64 << 20

    /// Uploads `file`, fetched from `url`, to `target`, stored with `contentType` (the origin's;
    /// see `S3ContentType`) and the URL's `ObjectSourceMark`. An object already there that an
    /// upload of the same URL did not store is kept (`destination-exists`) unless `replacing`
    /// (`--force`), as `-o s3://` keeps it. - Returns: a line saying what was stored.
    public static func send(
        _ file: String, from url: String, to target: String, replacing: Bool, contentType: String?, shouldCancel: () -> Bool
    ) throws -> String {
        let location = try S3Location(parsing: target, what: "--upload-to")
        let name = file.lastSlashComponent.map(String.init) ?? "file"
        let key = location.path.isEmpty || location.path.endsWithSlash ? location.path + name : location.path
        let client = S3Client(config: try S3Config.fromEnvironment())
        if !replacing, let head = try client.objectHead(bucket: location.bucket, key: key), !ObjectSourceMark.says(head, cameFrom: url) {
            throw HaulError(
                .destinationExists, "'s3://\(location.bucket)/\(key)' already exists and haul did not upload it from this URL; haul leaves it alone",
                hint: "pass --force to overwrite it, or give another --upload-to")
        }
        return try store(
            file, client: client, bucket: location.bucket, key: key, contentType: contentType, metadata: ObjectSourceMark.metadata(for: url),
            shouldCancel: shouldCancel)
    }

    /// Stores `file` as object `key` of `bucket`. - Returns: a line saying what was stored.
    public static func store(
        _ file: String, client: S3Client, bucket: String, key: String, contentType: String?, metadata: [String] = [], shouldCancel: () -> Bool
    ) throws -> String {
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HaulError(.storage, "cannot open \(file) to upload it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var attributes = stat()
        fstat(fd, &attributes)
        let size = Int64(attributes.st_size)
        if size <= singleRequestLimit {
            try retrying {
                lseek(fd, 0, SEEK_SET); try client.putObject(bucket: bucket, key: key, fd: fd, length: size, contentType: contentType, metadata: metadata)
            }
            return "stored s3://\(bucket)/\(key) (\(size) bytes)"
        }
        let partSize = S3PartRules.partSize(fileSize: size, requested: singleRequestLimit)
        let uploadID = try client.createUpload(bucket: bucket, key: key, contentType: contentType, metadata: metadata)
        do {
            var parts: [(number: Int, etag: String)] = []
            var offset: Int64 = 0
            while offset < size {
                if shouldCancel() { throw HaulError(.canceled, "the upload to s3://\(bucket)/\(key) was stopped", transient: true) }
                let length = min(partSize, size - offset)
                let number = parts.count + 1
                let etag = try retrying { () -> String in
                    lseek(fd, off_t(offset), SEEK_SET)
                    return try client.uploadPart(
                        bucket: bucket, key: key, uploadID: uploadID, number: number, length: length, feed: ByteFeed(fd: fd, limit: length))
                }
                parts.append((number, etag))
                offset += length
            }
            try client.completeUpload(bucket: bucket, key: key, uploadID: uploadID, parts: parts)
            return "stored s3://\(bucket)/\(key) (\(size) bytes, \(parts.count) parts)"
        } catch {
            try? client.abortUpload(bucket: bucket, key: key, uploadID: uploadID)
            throw error
        }
    }

    /// Runs `body` again after a transient failure (its bytes are still at hand, in a file or in
    /// memory), up to three attempts, unless `shouldStop` says to give up.
    public static func retrying<T>(shouldStop: () -> Bool = { false }, _ body: () throws -> T) throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do { return try body() } catch let error as HaulError where error.isTransient && attempt < 3 && !shouldStop() {
                usleep(UInt32(200_000 * attempt))
            }
        }
    }
}
