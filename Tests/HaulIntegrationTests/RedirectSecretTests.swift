import Foundation
import HaulTestSupport
import Testing

/// Secrets stay with their origin across redirects, and https is not
/// silently downgraded to http.
@Suite("security: redirects")
struct RedirectSecretTests {
    static let secrets = [
        "Authorization: Bearer s3cr3t-token", "Cookie: session=s3cr3t-cookie", "X-Api-Key: s3cr3t-key", "X-Auth-Token: s3cr3t-auth",
        "Proxy-Authorization: Basic s3cr3t-proxy",
    ]

    @Test("secret headers are sent to the origin and its same-origin redirects, never to another origin")
    func secretsStayWithTheirOrigin() throws {
        let first = try HostileOrigin()
        let second = try HostileOrigin()
        let cluster = try Cluster("redirect-secrets")
        let headers = (Self.secrets + ["X-Trace: visible"]).flatMap { ["--header", $0] }
        let away = try cluster.enqueue(
            first.base + "/redirect?to=" + second.base + "/file/away?size=300000", ["--dest", "away.bin", "--segment-size", "64KiB"] + headers)
        let home = try cluster.enqueue(first.base + "/redirect?to=/file/home?size=100000", ["--dest", "home.bin", "--segment-size", "64KiB"] + headers)
        try cluster.startWorker()
        #expect(try cluster.waitFinal([away, home]) == ["done", "done"])

        let received = try second.log()
        #expect(!received.isEmpty, "the second origin served the file")
        for request in received {
            for name in ["authorization", "cookie", "x-api-key", "x-auth-token", "proxy-authorization"] {
                #expect(request.headers[name] == nil, "\(name) reached the second origin: \(request.path)")
            }
            #expect(request.headers["x-trace"] == "visible", "other headers are kept")
        }
        let sameOrigin = try first.log().filter { $0.path.hasPrefix("/file/home") }
        #expect(!sameOrigin.isEmpty)
        for request in sameOrigin {
            #expect(request.headers["authorization"] == "Bearer s3cr3t-token" && request.headers["x-api-key"] == "s3cr3t-key")
        }
    }

    @Test("https → http is followed only with a checksum or --allow-downgrade")
    func downgrade() throws {
        let cluster = try Cluster("downgrade")
        let file = try Origin.file("security/downgrade.bin", size: 200_000)
        let url = Harness.originTLS + "/to-http/" + file.path.drop { $0 == "/" }
        let tls = ["--ca-cert", Harness.testCA, "--segment-size", "64KiB"]
        let refused = try cluster.enqueue(url, ["--dest", "refused.bin"] + tls)
        let checked = try cluster.enqueue(url, ["--dest", "checked.bin", "--checksum", "sha256:\(file.sha256)"] + tls)
        let allowed = try cluster.enqueue(url, ["--dest", "allowed.bin", "--allow-downgrade"] + tls)
        let worker = try cluster.startWorker()
        #expect(try cluster.waitFinal([refused, checked, allowed]) == ["failed", "done", "done"])
        #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(refused)") == "redirect-downgrade")
        #expect(cluster.sha256("checked.bin") == file.sha256 && cluster.sha256("allowed.bin") == file.sha256)
        #expect(!FileManager.default.fileExists(atPath: cluster.storage + "/refused.bin"))
        cluster.stopWorkers()
        #expect(worker.stderr.contains("following a redirect from https to http"), "the downgrade is logged")
    }

    @Test("the origin's --insecure does not reach the upload target, which has --upload-ca-cert")
    func uploadTLSIsItsOwn() throws {
        let cluster = try Cluster("upload-tls")
        let file = try Origin.file("security/upload-tls.bin", size: 100_000)
        // nginx's TLS server (the test CA's certificate) answers any POST with 405: reaching it
        // means TLS was accepted, failing with "tls-verify" means it was verified and refused (the code downloads use too).
        let target = Harness.originTLS + "/upload"
        let base = ["--segment-size", "64KiB", "--insecure", "--upload-to", target]
        let unverified = try cluster.enqueue(Harness.origin + file.path, ["--dest", "a.bin"] + base)
        let trusted = try cluster.enqueue(Harness.origin + file.path, ["--dest", "b.bin", "--upload-ca-cert", Harness.testCA] + base)
        try cluster.startWorker()
        #expect(try cluster.waitFinal([unverified, trusted]) == ["failed", "failed"])
        #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(unverified)") == "tls-verify")
        #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(trusted)") == "upload-rejected")
    }
}
