import Foundation
import HaulCore
import HaulHTTP
import HaulTestSupport
import Testing

@testable import HaulUpload

/// A tus server (`Receivers/hostile_tus.py`) that answers the creation request with a
/// `Location` off its own origin: the upload must fail with `bad-server` and nothing be written.
@Suite(.serialized) struct TusHostileLocationTests {
    let fast = RetryPolicy(attempts: 2, baseDelay: 0.01, maxDelay: 0.02)

    init() { _ = curlGlobalInit }

    @Test(arguments: ["file", "gopher", "other-port", "other-host"])
    func aLocationOffTheEndpointsOriginIsRefused(kind: String) throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("secret.bin", size: 100_000)
        let target = directory.path + "/pwned"
        let location =
            switch kind {
            case "file": "file://\(target)"
            case "gopher": "gopher://127.0.0.1:1/_pwned"
            case "other-port": "http://127.0.0.1:1/files/abc"
            default: "http://localhost.invalid/files/abc"
            }
        let receiver = try Receiver("hostile_tus.py", [location])
        let recorded = Box<String?>(nil)
        let error = #expect(throws: HaulError.self) {
            try TusUploader.upload(TusRequest(url: receiver.base + "/files/", file: file), retry: fast, onUploadURL: { recorded.value = $0 })
        }
        #expect(error?.code == .badServer)
        #expect(error?.message.contains("not") == true)
        #expect(recorded.value == nil)
        #expect(!FileManager.default.fileExists(atPath: target))
        let stats = try receiver.json("/stats")
        #expect(stats["PATCH"] as? Int == 0)
    }

    @Test func aResumeURLOffTheEndpointsOriginIsRefusedBeforeAnyRequest() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("secret.bin", size: 10_000)
        let target = directory.path + "/pwned"
        let receiver = try Receiver("hostile_tus.py", ["/files/abc"])
        let error = #expect(throws: HaulError.self) {
            try TusUploader.upload(
                TusRequest(url: receiver.base + "/files/", file: file), resumeURL: "file://\(target)", retry: fast, onUploadURL: { _ in })
        }
        #expect(error?.code == .badServer)
        #expect(!FileManager.default.fileExists(atPath: target))
        let stats = try receiver.json("/stats")
        #expect(stats["POST"] as? Int == 0 && stats["HEAD"] as? Int == 0)
    }

    @Test func aRelativeLocationIsResolvedAgainstTheEndpoint() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("data.bin", size: 10_000)
        let receiver = try Receiver("hostile_tus.py", ["/files/abc"])
        let recorded = Box<String?>(nil)
        let response = try TusUploader.upload(
            TusRequest(url: receiver.base + "/files/", file: file), retry: fast, onUploadURL: { recorded.value = $0 })
        #expect(response.status == 204)
        #expect(recorded.value == receiver.base + "/files/abc")
    }

    @Test func locationRules() throws {
        let endpoint = "https://up.example/files/"
        #expect(try TusLocation.resolve("/files/1", endpoint: endpoint) == "https://up.example/files/1")
        #expect(try TusLocation.resolve("2", endpoint: endpoint) == "https://up.example/files/2")
        #expect(try TusLocation.resolve("https://UP.example:443/files/3", endpoint: endpoint) == "https://UP.example:443/files/3")
        for hostile in [
            "http://up.example/files/1", "https://up.example:8443/files/1", "https://evil.example/files/1", "file:///etc/passwd",
            "gopher://up.example/x", "smtp://up.example/", "//evil.example/files/1", "https://up.example@evil.example/",
        ] {
            #expect(throws: HaulError.self, "\(hostile)") { try TusLocation.resolve(hostile, endpoint: endpoint) }
        }
    }
}
