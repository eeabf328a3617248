import Foundation
import HaulTestSupport
import Testing

/// How `haul` uses its connections to an S3 store: reused from request to request, and a
/// store whose certificate cannot be trusted reported at once. The store is reached through a
/// counting TCP proxy, so the connections are counted from outside the binary.
@Suite("S3 storage: connections")
struct S3ConnectionTests {
    /// Port of the test SeaweedFS (`http://127.0.0.1:PORT`).
    static var storePort: Int { Int(Harness.required("HAUL_TEST_S3_ENDPOINT").split(separator: ":").last!)! }

    /// A batch opens at most 4 connections to the store per lane (issue 49): a connection
    /// carries one request at a time, so as many are opened as requests run at once, and they
    /// are kept from request to request. Each file costs a `HeadObject` and a `PutObject` at
    /// least, 2 × 100 requests. Measured: 8 here; 11 to 19 with a kept connection for each
    /// request running at once, one connection per request (3 per file) before that.
    @Test("a batch of 100 small files into a bucket opens at most 4 connections to the store per lane")
    func batchReusesConnections() throws {
        let proxy = try CountingProxy(targetPort: Self.storePort)
        defer { proxy.stop() }
        let bucket = try S3Bucket("conn")
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("s3-conn")
        let tag = UUID().uuidString.prefix(6)
        let count = 100
        let files = try (0..<count).map { try Origin.file("s3/conn-\(tag)/f\($0).bin", size: 1000 + $0) }
        let list = directory + "/list.txt"
        try files.map { Harness.origin + $0.path + "\n" }.joined().write(toFile: list, atomically: true, encoding: .utf8)
        let lanes = 2
        let environment = S3Bucket.environment.merging(["AWS_ENDPOINT_URL": proxy.url]) { $1 }
        let get = try Run.haul(
            ["get", "-q", "-x", String(lanes), "-i", list, "-o", "s3://\(bucket.name)/b/"], database: database.url, environment: environment,
            timeout: 300)
        #expect(get.status == 0, "\(get.stderr)")
        #expect(try bucket.keys("b/").count == count)
        #expect(try bucket.object("b/f\(count - 1).bin")?.sha256 == files[count - 1].sha256)
        #expect(proxy.connections <= 4 * lanes, "\(proxy.connections) connections to the store for \(count) files on \(lanes) lanes")
    }

    @Test("an S3 endpoint whose TLS certificate is not trusted is reported once with its cause, exit 5, never retried")
    func untrustedStoreCertificate() throws {
        // The TLS origin is signed by the test CA, which haul is not told about: untrusted.
        let tlsPort = Int(Harness.originTLS.split(separator: ":").last!)!
        let proxy = try CountingProxy(targetPort: tlsPort)
        defer { proxy.stop() }
        let database = try TestDatabase()
        let file = try Origin.file("s3/conn-tls-\(UUID().uuidString.prefix(6)).bin", size: 1000)
        let environment = S3Bucket.environment.merging(["AWS_ENDPOINT_URL": "https://127.0.0.1:\(proxy.port)"]) { $1 }
        let get = try Run.haul(["get", "-q", Harness.origin + file.path, "-o", "s3://haul-tls/x.bin"], database: database.url, environment: environment)
        #expect(get.status == 5, "exit 5 is TLS (docs/reference-exit-codes.md): \(get.stderr)")
        #expect(get.stderr.contains("TLS certificate is not trusted") && get.stderr.contains("AWS_CA_BUNDLE"), "\(get.stderr)")
        #expect(get.stderr.components(separatedBy: "TLS certificate").count == 2, "reported once: \(get.stderr)")
        #expect(!get.stderr.contains("cannot reach"), "\(get.stderr)")
        #expect(proxy.connections == 1, "one attempt, no retries: \(proxy.connections) connections")
    }
}
