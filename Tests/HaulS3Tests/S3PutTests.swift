import Foundation
import HaulCore
import HaulS3
import Testing

/// `PutObject` against the test SeaweedFS (started by `scripts/test-services.sh`).
@Suite("S3 PutObject against a real server")
struct S3PutTests {
    let client: S3Client
    let bucket = "haul-put-\(UUID().uuidString.prefix(8).lowercased())"

    init() throws {
        let env = ProcessInfo.processInfo.environment
        let endpoint = try #require(env["HAUL_TEST_S3_ENDPOINT"], "run under bin/test (it starts SeaweedFS)")
        let credentials = S3Credentials(accessKeyID: env["HAUL_TEST_S3_KEY"] ?? "", secretAccessKey: env["HAUL_TEST_S3_SECRET"] ?? "")
        client = S3Client(config: S3Config(endpoint: endpoint, region: "us-east-1", credentials: credentials))
        let made = try client.send(S3Request("PUT", config: client.config, bucket: bucket))
        try #require(made.status == 200, "create bucket: HTTP \(made.status)")
    }

    private func read(_ key: String) throws -> Data {
        var data = Data()
        try client.readObject(bucket: bucket, key: key) { bytes in
            data.append(contentsOf: bytes)
            return true
        }
        return data
    }

    @Test("a streamed PutObject whose object was replaced after it started fails (412) and leaves the newer object")
    func supersededWhileStreaming() throws {
        let body = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let stream = try PartStream.putObject(client: client, bucket: bucket, key: "k", length: Int64(body.count))
        // More than a socket pair buffers: once this returns, the request has looked the object up and is sending.
        try body.prefix(body.count - 1).withUnsafeBytes { bytes in try stream.write(bytes) { true } }
        let newer = Data("newer".utf8)
        _ = try client.putObject(bucket: bucket, key: "k", length: Int64(newer.count), feed: pipeFeed(newer), precondition: nil)
        try body.suffix(1).withUnsafeBytes { bytes in try stream.write(bytes) { true } }
        #expect {
            _ = try stream.finish {}
        } throws: { error in
            (error as? HaulError)?.code == .s3ObjectChanged && (error as? HaulError)?.isTransient == true
        }
        #expect(try read("k") == newer)
        // With nothing in the way, the same stream shape stores the object.
        let again = try PartStream.putObject(client: client, bucket: bucket, key: "k", length: Int64(body.count))
        try body.withUnsafeBytes { bytes in try again.write(bytes) { true } }
        #expect(try !again.finish {}.isEmpty)
        #expect(try read("k") == body)
    }

    @Test("a PutObject carrying the expected sha256 is refused when the bytes differ; nothing is stored")
    func checksumRefused() throws {
        let body = Data("some bytes".utf8)
        let wrong = [UInt8](repeating: 7, count: 32)
        #expect {
            try client.putObject(bucket: bucket, key: "c", length: Int64(body.count), feed: pipeFeed(body), precondition: .absent, sha256: wrong)
        } throws: { error in
            (error as? HaulError)?.code == .checksumMismatch
        }
        #expect(try client.objectSize(bucket: bucket, key: "c") == nil)
    }

    /// A feed that reads `data` from a pipe (small enough for the pipe's buffer).
    private func pipeFeed(_ data: Data) throws -> ByteFeed {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        _ = data.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        close(fds[1])
        return ByteFeed(fd: fds[0])
    }
}

@Suite("S3 content types")
struct S3ContentTypeValueTests {
    @Test("the origin's Content-Type is kept when it is a plain header value, else application/octet-stream")
    func values() {
        #expect(S3ContentType.value("video/mp4") == "video/mp4")
        #expect(S3ContentType.value("  text/plain;\t charset=utf-8 ") == "text/plain; charset=utf-8")
        #expect(S3ContentType.value(nil) == "application/octet-stream")
        #expect(S3ContentType.value("") == "application/octet-stream")
        #expect(S3ContentType.value("text/plain\u{7}") == "application/octet-stream")
        #expect(S3ContentType.value("täxt/plain") == "application/octet-stream")
        #expect(S3ContentType.value(String(repeating: "a", count: 257)) == "application/octet-stream")
        #expect(S3ContentType.header(nil) == "Content-Type: application/octet-stream")
    }
}

@Suite("S3 stores without optional features")
struct S3SupportTests {
    @Test("a 501 to a PutObject with a conditional header drops conditional writes first, then checksums")
    func refusals() {
        #expect(S3Support.refused(status: 501, code: "NotImplemented", sentPrecondition: true, sentChecksum: true) == .conditionalWrites)
        #expect(S3Support.refused(status: 501, code: nil, sentPrecondition: false, sentChecksum: true) == .checksums)
        #expect(S3Support.refused(status: 400, code: "NotImplemented", sentPrecondition: false, sentChecksum: true) == .checksums)
        #expect(S3Support.refused(status: 501, code: "NotImplemented", sentPrecondition: false, sentChecksum: false) == nil)
        #expect(S3Support.refused(status: 503, code: "SlowDown", sentPrecondition: true, sentChecksum: true) == nil)
        let support = S3Support()
        #expect(support.supports(.conditionalWrites) && support.supports(.checksums))
        #expect(support.drop(.conditionalWrites))
        #expect(!support.drop(.conditionalWrites), "recorded once")
        #expect(!support.supports(.conditionalWrites) && support.supports(.checksums))
    }

    @Test("a PutObject refused for lacking Content-MD5 (Object Lock) is told apart from other 400s; the requirement is recorded once")
    func contentMD5() {
        let lock = "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters"
        #expect(S3Support.asksForContentMD5(status: 400, code: "InvalidRequest", message: lock))
        #expect(S3Support.asksForContentMD5(status: 400, code: "MissingUploadObjectWithObjectLockHeaders", message: nil))
        #expect(!S3Support.asksForContentMD5(status: 400, code: "InvalidRequest", message: "Invalid part number"))
        #expect(!S3Support.asksForContentMD5(status: 403, code: "AccessDenied", message: lock))
        let support = S3Support()
        #expect(!support.requiresContentMD5)
        #expect(support.requireContentMD5() && !support.requireContentMD5())
        #expect(support.requiresContentMD5)
        // The MD5 of "hello", as S3 wants it: base64 of the 16 bytes.
        #expect(S3Support.contentMD5(Data("hello".utf8)) == "Content-MD5: XUFAKrxLKna5cZ2REBfFkg==")
    }

    @Test("any other 501 NotImplemented is permanent, not retried as an unavailable store")
    func permanent() {
        let config = S3Config(endpoint: "http://127.0.0.1:8333", region: "us-east-1", credentials: S3Credentials(accessKeyID: "AK", secretAccessKey: "s"))
        let error = S3Failure.error(status: 501, code: "NotImplemented", message: nil, bucketRegion: nil, doing: "x", bucket: "b", config: config)
        #expect(error.code == .s3Unsupported && !error.isTransient)
        #expect(S3Failure.error(status: 503, code: nil, message: nil, bucketRegion: nil, doing: "x", bucket: "b", config: config).isTransient)
    }
}
