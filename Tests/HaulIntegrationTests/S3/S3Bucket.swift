import Foundation
import HaulTestSupport
import Testing

/// A fresh bucket on the test SeaweedFS (or on another store, e.g. `MotoS3`), checked with
/// boto3 (`S3/s3check.py`), never with Haul. Making one deletes some test buckets left from
/// runs more than two hours old, so that repeated runs do not fill the store.
struct S3Bucket {
    let name: String
    /// The store's endpoint.
    let endpoint: String

    /// The environment a `haul` process needs to reach the test S3 service.
    static var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": Harness.required("HAUL_TEST_S3_KEY"), "AWS_SECRET_ACCESS_KEY": Harness.required("HAUL_TEST_S3_SECRET"),
            "AWS_ENDPOINT_URL": Harness.required("HAUL_TEST_S3_ENDPOINT"), "AWS_REGION": "us-east-1",
        ]
    }

    /// The environment a `haul` process needs to reach this bucket's store.
    var storeEnvironment: [String: String] { Self.environment.merging(["AWS_ENDPOINT_URL": endpoint]) { $1 } }

    /// Creates a bucket named after `label` (plus a random tail) on the store at `endpoint`
    /// (default: the test SeaweedFS); with `objectLock`, with Object Lock and a default retention.
    init(_ label: String, endpoint: String? = nil, objectLock: Bool = false) throws {
        name = "haul-\(label)-\(UUID().uuidString.prefix(8).lowercased())"
        self.endpoint = endpoint ?? Harness.required("HAUL_TEST_S3_ENDPOINT")
        _ = try check([objectLock ? "mklockbucket" : "mkbucket", name])
    }

    /// The object's `Content-Type`, `nil` if there is no such object.
    func contentType(_ key: String) throws -> String? {
        try check(["type", name, key]) as? String
    }

    /// Size and sha256 of `key`, `nil` if there is no such object.
    func object(_ key: String) throws -> (size: Int, sha256: String)? {
        try stored(key).map { ($0.size, $0.sha256) }
    }

    /// What the store holds under `key`, `nil` if there is no such object.
    func stored(_ key: String) throws -> Stored? {
        guard let found = try check(["stat", name, key]) as? [String: Any] else { return nil }
        return Stored(
            size: found["size"] as? Int ?? -1, sha256: found["sha256"] as? String ?? "", etag: found["etag"] as? String ?? "",
            md5: found["md5"] as? String ?? "")
    }

    /// An object as an independent client reads it.
    struct Stored {
        let size: Int
        let sha256: String
        let etag: String
        let md5: String
        /// Whether it was stored by one `PutObject` (its ETag is its MD5; a multipart object's ends in `-N`).
        var isSinglePut: Bool { etag == md5 }
    }

    /// Stores `text` under `key` (as another writer would). The bytes go through a file: an
    /// argument cannot carry a NUL, which a tar's padding holds.
    func put(_ key: String, _ text: String) throws {
        let body = NSTemporaryDirectory() + "haul-put-" + UUID().uuidString
        try Data(text.utf8).write(to: URL(fileURLWithPath: body))
        defer { try? FileManager.default.removeItem(atPath: body) }
        _ = try check(["put", name, key, body])
    }

    /// Puts random bytes of the same size over object `key` (a stranger's object, same size).
    func scramble(_ key: String) throws {
        _ = try check(["scramble", name, key])
    }

    /// The multipart uploads still open in the bucket.
    func openUploads() throws -> [String] {
        ((try check(["uploads", name]) as? [[String: Any]]) ?? []).compactMap { $0["key"] as? String }
    }

    /// Starts a multipart upload of `key` that nothing owns (an orphan). - Returns: its upload id.
    @discardableResult
    func startUpload(_ key: String) throws -> String {
        guard let id = try check(["start", name, key]) as? String else { throw TestFailure("s3check start \(key) printed no upload id") }
        return id
    }

    /// Aborts every multipart upload open for `key` (as a lifecycle rule or an operator would).
    /// - Returns: how many there were.
    @discardableResult
    func abortUploads(_ key: String) throws -> Int {
        try check(["abort", name, key]) as? Int ?? 0
    }

    /// The keys under `prefix`.
    func keys(_ prefix: String = "") throws -> [String] {
        (try check(["keys", name, prefix]) as? [String]) ?? []
    }

    private func check(_ arguments: [String]) throws -> Any? {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("s3check.py").path
        let python = Harness.environment["HAUL_TEST_PYTHON"] ?? "python3"
        let result = try Run.program(python, [script] + arguments, environment: ["HAUL_TEST_S3_ENDPOINT": endpoint], timeout: 120)
        guard result.status == 0 else { throw TestFailure("s3check \(arguments.joined(separator: " ")) failed: \(result.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8), options: [.fragmentsAllowed])
    }
}

extension Cluster {
    /// Starts a `haul worker` whose storage is `s3://BUCKET/PREFIX`.
    @discardableResult
    func startS3Worker(_ storage: String, _ extra: [String] = []) throws -> Child {
        try startWorker(extra, environment: S3Bucket.environment, storage: storage)
    }
}
