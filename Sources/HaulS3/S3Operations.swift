import Foundation
import HaulCore
import HaulHTTP

/// The S3 API calls Haul makes, each failing with a clear `HaulError`.
extension S3Client {
    /// Checks that the bucket exists and the credentials may list the keys under `prefix`
    /// (`ListObjectsV2` of one key there): what the work itself needs, so that keys limited to a
    /// prefix (`s3:ListBucket` with an `s3:prefix` condition) pass where a `HeadBucket`, which
    /// needs the whole bucket, is refused.
    public func checkBucket(_ bucket: String, prefix: String) throws {
        let request = S3Request("GET", config: config, bucket: bucket, query: [("list-type", "2"), ("max-keys", "1"), ("prefix", prefix)])
        _ = try perform(request, doing: "reach bucket '\(bucket)'", bucket: bucket, attempts: 3)
    }

    /// Starts a multipart upload of `key`, whose object is stored with `contentType` (see
    /// `S3ContentType`) and `metadata` header lines. - Returns: its upload id.
    public func createUpload(bucket: String, key: String, contentType: String? = nil, metadata: [String] = []) throws -> String {
        let request = S3Request(
            "POST", config: config, bucket: bucket, key: key, query: [("uploads", "")], headers: [S3ContentType.header(contentType)] + metadata)
        let doing = "start an upload of s3://\(bucket)/\(key)"
        let response = try perform(request, doing: doing, bucket: bucket)
        guard let id = S3XML.value("UploadId", in: String(decoding: response.body, as: UTF8.self)), !id.isEmpty else {
            throw HaulError(.s3, "cannot \(doing): the answer had no UploadId", transient: true)
        }
        return id
    }

    /// Sends part `number` of upload `uploadID`, `length` bytes read from `feed`. Not retried
    /// here (the bytes are gone): the caller retries the segment. - Returns: the part's ETag.
    public func uploadPart(bucket: String, key: String, uploadID: String, number: Int, length: Int64, feed: ByteFeed) throws -> String {
        let request = S3Request(
            "PUT", config: config, bucket: bucket, key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)],
            headers: [])
        let doing = "upload part \(number) of s3://\(bucket)/\(key)"
        let response = try send(request, body: .stream(feed, length: length))
        if let error = failure(response, doing: doing, bucket: bucket) { throw error }
        guard let etag = response.headers["etag"], !etag.isEmpty else { throw HaulError(.s3, "cannot \(doing): the answer had no ETag", transient: true) }
        return etag
    }

    /// Completes upload `uploadID` with `parts` (number, ETag). - Returns: the object's ETag.
    @discardableResult
    public func completeUpload(bucket: String, key: String, uploadID: String, parts: [(number: Int, etag: String)]) throws -> String? {
        let request = S3Request("POST", config: config, bucket: bucket, key: key, query: [("uploadId", uploadID)], headers: ["Content-Type: application/xml"])
        let body = Data(S3XML.completion(parts).utf8)
        let response = try perform(request, body: body, doing: "complete the upload of s3://\(bucket)/\(key)", bucket: bucket)
        return S3XML.value("ETag", in: String(decoding: response.body, as: UTF8.self))
    }

    /// Aborts upload `uploadID`; one already gone counts as aborted.
    public func abortUpload(bucket: String, key: String, uploadID: String) throws {
        let request = S3Request("DELETE", config: config, bucket: bucket, key: key, query: [("uploadId", uploadID)])
        do {
            _ = try perform(request, doing: "abort the upload of s3://\(bucket)/\(key)", bucket: bucket)
        } catch let error as HaulError where error.code == .s3NoUpload || error.message.contains("HTTP 404") {
            return
        }
    }

    /// What `HeadObject` says of an object.
    public struct ObjectHead: Sendable {
        /// Its size, if the answer said.
        public let size: Int64?
        /// Its ETag as S3 sends it (quoted), if the answer had one.
        public let etag: String?
        /// Its user metadata (`x-amz-meta-NAME: value`), by lowercased `NAME`.
        public let metadata: [String: String]
        /// When it was stored (`Last-Modified`, an HTTP date), if the answer said.
        public var lastModified: String? = nil
    }

    /// Object `key`'s size, ETag and user metadata, `nil` if there is none (`HeadObject`).
    public func objectHead(bucket: String, key: String) throws -> ObjectHead? {
        guard let response = try headObject(bucket: bucket, key: key) else { return nil }
        let prefix = "x-amz-meta-"
        let metadata = Dictionary(
            response.headers.filter { $0.key.hasPrefix(prefix) }.map { (String($0.key.dropFirst(prefix.count)), $0.value) }, uniquingKeysWith: { a, _ in a })
        return ObjectHead(
            size: response.headers["content-length"].flatMap { Int64($0) }, etag: response.headers["etag"], metadata: metadata,
            lastModified: response.headers["last-modified"])
    }

    /// The size of object `key`, `nil` if there is none (`HeadObject`).
    public func objectSize(bucket: String, key: String) throws -> Int64? {
        try objectHead(bucket: bucket, key: key)?.size
    }

    /// The `HeadObject` answer for `key`, `nil` if there is none; a transient failure is asked again (`RetryPolicy.store`).
    func headObject(bucket: String, key: String) throws -> Response? {
        let request = S3Request("HEAD", config: config, bucket: bucket, key: key)
        let doing = "look up s3://\(bucket)/\(key)"
        var retry = RetryLoop(policy: .store)
        return try retry.run { () throws -> Response? in
            let response = try send(request)
            if response.status == 404 { return nil }
            if let error = failure(response, doing: doing, bucket: bucket) { throw error }
            return response
        }
    }

    /// Streams object `key` to `sink` (which returns false to stop). - Returns: bytes read.
    @discardableResult
    public func readObject(bucket: String, key: String, sink: @escaping (UnsafeRawBufferPointer) -> Bool) throws -> Int64 {
        var total: Int64 = 0
        let response = try send(S3Request("GET", config: config, bucket: bucket, key: key)) { bytes in
            total += Int64(bytes.count)
            return sink(bytes)
        }
        if let error = failure(response, doing: "read s3://\(bucket)/\(key)", bucket: bucket) { throw error }
        return total
    }

    /// Puts the `length` bytes of open file `fd` as object `key` in one request (`PutObject`),
    /// with `contentType` (see `S3ContentType`) and `metadata` header lines (`x-amz-meta-NAME: value`).
    /// It carries the file's `Content-MD5` (read once before), which buckets with Object Lock
    /// retention require.
    public func putObject(bucket: String, key: String, fd: Int32, length: Int64, contentType: String? = nil, metadata: [String] = []) throws {
        var headers = [S3ContentType.header(contentType)] + metadata
        if let md5 = Self.contentMD5(fd: fd, length: length) { headers.append(md5) }
        let request = S3Request("PUT", config: config, bucket: bucket, key: key, headers: headers)
        let response = try send(request, body: .stream(ByteFeed(fd: fd), length: length))
        if let error = failure(response, doing: "put s3://\(bucket)/\(key)", bucket: bucket) { throw error }
    }

    /// Copies object `source` of `bucket` to `key` on the store, with its type and metadata:
    /// one `CopyObject` up to 5 GiB, else a multipart upload of `UploadPartCopy` parts.
    public func copyObject(bucket: String, from source: String, to key: String) throws {
        let doing = "copy s3://\(bucket)/\(source) to \(key)"
        let from = "x-amz-copy-source: /\(bucket)/\(S3Request.encode(source, keepSlash: true))"
        guard let head = try headObject(bucket: bucket, key: source), let size = head.headers["content-length"].flatMap({ Int64($0) }) else {
            throw HaulError(.s3, "cannot \(doing): the object is gone", transient: true)
        }
        if size <= S3PartRules.maximumPart {
            _ = try perform(S3Request("PUT", config: config, bucket: bucket, key: key, headers: [from]), doing: doing, bucket: bucket)
            return
        }
        let metadata = head.headers.filter { $0.key.hasPrefix("x-amz-meta-") }.map { "\($0.key): \($0.value)" }
        let uploadID = try createUpload(bucket: bucket, key: key, contentType: head.headers["content-type"], metadata: metadata)
        do {
            let part = S3PartRules.partSize(fileSize: size, requested: S3PartRules.maximumPart)
            var parts: [(number: Int, etag: String)] = []
            var offset: Int64 = 0
            while offset < size {
                let end = min(offset + part, size) - 1
                let request = S3Request(
                    "PUT", config: config, bucket: bucket, key: key, query: [("partNumber", String(parts.count + 1)), ("uploadId", uploadID)],
                    headers: [from, "x-amz-copy-source-range: bytes=\(offset)-\(end)"])
                let response = try perform(request, doing: doing, bucket: bucket)
                guard let etag = S3XML.value("ETag", in: String(decoding: response.body, as: UTF8.self)) else {
                    throw HaulError(.s3, "cannot \(doing): the answer had no ETag", transient: true)
                }
                parts.append((parts.count + 1, etag))
                offset = end + 1
            }
            try completeUpload(bucket: bucket, key: key, uploadID: uploadID, parts: parts)
        } catch {
            try? abortUpload(bucket: bucket, key: key, uploadID: uploadID)
            throw error
        }
    }

    /// The `Content-MD5` header line of the first `length` bytes of file `fd`, read with
    /// `pread`; `nil` when it cannot be read so.
    static func contentMD5(fd: Int32, length: Int64) -> String? {
        let digester = Digester(.md5)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while offset < length {
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, Int(min(Int64($0.count), length - offset)), off_t(offset)) }
            guard got > 0 else { return nil }
            buffer.withUnsafeBytes { digester.update(UnsafeRawBufferPointer(rebasing: $0.prefix(got))) }
            offset += Int64(got)
        }
        return "Content-MD5: \(Data(digester.finish().bytes).base64EncodedString())"
    }

    /// Deletes object `key` (one already gone counts as deleted).
    public func deleteObject(bucket: String, key: String) throws {
        _ = try perform(S3Request("DELETE", config: config, bucket: bucket, key: key), doing: "delete s3://\(bucket)/\(key)", bucket: bucket)
    }

    /// The first key under `prefix` (`ListObjectsV2`, one key asked for), `nil` when none is there.
    public func firstKey(bucket: String, prefix: String) throws -> String? {
        let request = S3Request("GET", config: config, bucket: bucket, query: [("list-type", "2"), ("max-keys", "1"), ("prefix", prefix)])
        let response = try perform(request, doing: "list the objects in s3://\(bucket)/\(prefix)", bucket: bucket)
        return S3XML.blocks("Contents", in: String(decoding: response.body, as: UTF8.self)).first.flatMap { S3XML.value("Key", in: $0) }
    }

    /// The multipart uploads open under `prefix`, every page.
    public func listUploads(bucket: String, prefix: String) throws -> [S3XML.Upload] {
        var all: [S3XML.Upload] = []
        var markers: (String?, String?) = (nil, nil)
        repeat {
            var query = [("uploads", ""), ("prefix", prefix)]
            if let key = markers.0 { query.append(("key-marker", key)) }
            if let id = markers.1 { query.append(("upload-id-marker", id)) }
            let response = try perform(
                S3Request("GET", config: config, bucket: bucket, query: query), doing: "list the uploads in s3://\(bucket)/\(prefix)", bucket: bucket)
            let page = S3XML.uploads(String(decoding: response.body, as: UTF8.self))
            all += page.uploads
            markers = (page.nextKey, page.nextUploadID)
        } while markers.0 != nil
        return all
    }
}
