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
    /// digest of the bytes: the body is read whole and checked before it is sent, and the store
    /// checks it again, so a wrong object never appears and the one there stays. `contentType`: the origin's (see `S3ContentType`). Not retried here
    /// (the bytes are gone). - Returns: the object's ETag.
    public func putObject(
        bucket: String, key: String, length: Int64, feed: ByteFeed, precondition: S3Precondition?, sha256: [UInt8]? = nil,
        contentType: String? = nil, metadata: [String] = []
    ) throws -> String {
        var headers = [S3ContentType.header(contentType)] + metadata
        let precondition = support.supports(.conditionalWrites) ? precondition : nil
        let expected = sha256
        let sha256 = support.supports(.checksums) ? sha256 : nil
        if let precondition { headers.append(precondition.header) }
        if let sha256 { headers.append("x-amz-checksum-sha256: \(Data(sha256).base64EncodedString())") }
        let doing = "put s3://\(bucket)/\(key)"
        var body = S3Client.Body.stream(feed, length: length)
        if support.requiresContentMD5 || expected != nil {
            // Read whole (below the 5 MiB part minimum) to digest it before the first byte is
            // sent, then sent from memory: wrong bytes never replace the object there, even on a
            // store that ignores x-amz-checksum-sha256.
            let bytes = try Self.readAll(feed, length: length, doing: doing)
            if let expected, Self.sha256(bytes) != expected {
                throw HaulError(
                    .checksumMismatch, "checksum mismatch: the bytes for s3://\(bucket)/\(key) do not have the expected sha256; nothing was stored",
                    hint: "check the published digest")
            }
            if support.requiresContentMD5 { headers.append(S3Support.contentMD5(bytes)) }
            body = .bytes(bytes)
        }
        let request = S3Request("PUT", config: config, bucket: bucket, key: key, headers: headers)
        let response = try send(request, body: body)
        let text = String(decoding: response.body.prefix(64 << 10), as: UTF8.self)
        if S3Support.asksForContentMD5(status: response.status, code: S3XML.value("Code", in: text), message: S3XML.value("Message", in: text)) {
            if support.requireContentMD5() {
                Log.info("the S3 bucket requires Content-MD5 (Object Lock); small objects are read whole to digest them", [("bucket", bucket)])
            }
            throw HaulError(.s3, "cannot \(doing): bucket '\(bucket)' requires Content-MD5 (Object Lock); retried with it", transient: true)
        }
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

    /// The sha256 of `bytes`.
    static func sha256(_ bytes: Data) -> [UInt8] {
        let digester = Digester(.sha256)
        bytes.withUnsafeBytes { digester.update($0) }
        return digester.finish().bytes
    }

    /// The `length` bytes of `feed`, read whole. - Throws: when it ends early or is canceled.
    static func readAll(_ feed: ByteFeed, length: Int64, doing: String) throws -> Data {
        var bytes = Data(count: Int(length))
        var got = 0
        while got < bytes.count, !feed.isCanceled {
            let read = bytes.withUnsafeMutableBytes { feed.read(into: $0.baseAddress! + got, count: $0.count - got) }
            guard read > 0 else { break }
            got += read
        }
        guard got == bytes.count else {
            throw HaulError(.s3, "cannot \(doing): the body ended after \(got) of \(length) bytes", transient: true)
        }
        return bytes
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
