import Foundation
import HaulCore

/// What a `PutObject` expects to find under its key, so that it never replaces an object that
/// someone else wrote meanwhile: the store answers 412 instead (`If-Match` / `If-None-Match`).
public enum S3Precondition: Sendable, Equatable {
    /// No object may be there (`If-None-Match: *`).
    case absent
    /// The object must still have this ETag (`If-Match`).
    case etag(String)

    /// The precondition of an object as a lookup saw it (`nil`: none there); `nil` when the
    /// answer had no ETag to hold it to.
    public static func seen(_ head: S3Client.ObjectHead?) -> S3Precondition? {
        guard let head else { return .absent }
        guard let etag = head.etag, !etag.isEmpty else { return nil }
        return .etag(etag)
    }

    /// The header line that states it.
    var header: String {
        switch self {
        case .absent: "If-None-Match: *"
        case .etag(let etag): "If-Match: \(etag)"
        }
    }
}

extension S3Client {
    /// The precondition describing object `key` as it is now (`HeadObject`).
    public func currentState(bucket: String, key: String) throws -> S3Precondition {
        guard let response = try headObject(bucket: bucket, key: key) else { return .absent }
        guard let etag = response.headers["etag"], !etag.isEmpty else {
            throw HaulError(.s3, "cannot look up s3://\(bucket)/\(key): the answer had no ETag", transient: true)
        }
        return .etag(etag)
    }

    /// Puts `length` bytes read from `feed` as object `key` in one request, only if the object is
    /// still as `precondition` says (412 fails with `s3-object-changed`). `sha256`, the expected
    /// digest of the bytes, makes the store refuse a body that does not match it, so a wrong
    /// object never appears. `contentType`: the origin's (see `S3ContentType`). Not retried here
    /// (the bytes are gone). - Returns: the object's ETag.
    public func putObject(
        bucket: String, key: String, length: Int64, feed: ByteFeed, precondition: S3Precondition?, sha256: [UInt8]? = nil,
        contentType: String? = nil, metadata: [String] = []
    ) throws -> String {
        var headers = [S3ContentType.header(contentType)] + metadata
        let precondition = support.supports(.conditionalWrites) ? precondition : nil
        let sha256 = support.supports(.checksums) ? sha256 : nil
        if let precondition { headers.append(precondition.header) }
        if let sha256 { headers.append("x-amz-checksum-sha256: \(Data(sha256).base64EncodedString())") }
        let request = S3Request("PUT", config: config, bucket: bucket, key: key, headers: headers)
        let doing = "put s3://\(bucket)/\(key)"
        let response = try send(request, body: .stream(feed, length: length))
        let text = String(decoding: response.body.prefix(64 << 10), as: UTF8.self)
        if let feature = S3Support.refused(
            status: response.status, code: S3XML.value("Code", in: text), sentPrecondition: precondition != nil, sentChecksum: sha256 != nil)
        {
            // Detected once per store: later requests leave the feature out.
            if support.drop(feature) {
                Log.warning("the S3 store does not implement \(feature) (501 NotImplemented); Haul goes on without them", [("endpoint", config.endpoint)])
            }
            throw HaulError(.s3Unsupported, "cannot \(doing): \(config.endpoint) does not implement \(feature); retried without them", transient: true)
        }
        if let error = failure(response, doing: doing, bucket: bucket) { throw error }
        return response.headers["etag"] ?? ""
    }
}

extension PartStream {
    /// Starts a `PutObject` of `key`, exactly `length` bytes, that puts only if the object did not
    /// change since it was seen (see `S3Precondition`): as `seen` says, when the caller looked it
    /// up already, else as a lookup first finds it. `sha256`: the expected digest of the whole
    /// body, checked by the store; `contentType`: the origin's.
    public static func putObject(
        client: S3Client, bucket: String, key: String, length: Int64, seen: S3Precondition? = nil, sha256: [UInt8]? = nil,
        contentType: String? = nil, metadata: [String] = []
    ) throws -> PartStream {
        try PartStream { feed in
            let now = try seen ?? client.currentState(bucket: bucket, key: key)
            return try client.putObject(
                bucket: bucket, key: key, length: length, feed: feed, precondition: now, sha256: sha256, contentType: contentType, metadata: metadata)
        }
    }
}
