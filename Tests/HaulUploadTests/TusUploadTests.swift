import Foundation
import HaulCore
import HaulHTTP
import HaulTestSupport
import Testing

@testable import HaulUpload

/// Uploads to `Receivers/tus_receiver.py`: tuspyserver under uvicorn, counting PATCH bytes.
@Suite(.serialized) struct TusUploadTests {
    let fast = RetryPolicy(attempts: 4, baseDelay: 0.01, maxDelay: 0.05)

    init() { _ = curlGlobalInit }

    @Test func anInterruptedUploadResumesFromTheServersOffset() throws {
        let directory = try TemporaryDirectory()
        let size = 48 << 20
        let file = try directory.makeFile("dataset.csv", size: size)
        let stored = directory.path + "/server"
        let receiver = try Receiver("tus_receiver.py", [stored])
        let request = TusRequest(url: receiver.base + "/files", file: file, chunkSize: 4 << 20)
        let recorded = Box<String?>(nil)
        let position = Box<Int64>(0)

        let interrupted = #expect(throws: HaulError.self) {
            try TusUploader.upload(
                request, retry: fast, onUploadURL: { recorded.value = $0 }, progress: { sent, _ in position.value = sent },
                shouldCancel: { position.value > 21 << 20 })
        }
        #expect(interrupted?.code == .canceled)
        try receiver.waitUntilIdle()
        let uploadURL = try #require(recorded.value)
        let sentBefore = try #require(try receiver.json("/stats")["patch_bytes"] as? Int)

        let firstOnResume = Box<Int64?>(nil)
        let response = try TusUploader.upload(
            request, resumeURL: uploadURL, retry: fast, onUploadURL: { recorded.value = $0 },
            progress: { sent, _ in firstOnResume.value = firstOnResume.value ?? sent })
        #expect(response.status == 204)
        #expect(response.header("Upload-Offset") == "\(size)")
        #expect(recorded.value == uploadURL)
        let sentOnResume = try #require(try receiver.json("/stats")["patch_bytes"] as? Int) - sentBefore
        #expect(sentOnResume > 0 && sentOnResume < size)
        #expect((firstOnResume.value ?? 0) >= 16 << 20)

        let id = try #require(uploadURL.split(separator: "/").last)
        #expect(try sha256(ofFile: "\(stored)/\(id)") == (try sha256(ofFile: file)))
        let info = try String(contentsOfFile: "\(stored)/\(id).info", encoding: .utf8)
        #expect(info.contains("dataset.csv"))
        #expect(info.contains("text/csv"))
    }

    /// The upload's requests (a POST, then a PATCH per chunk) take turns on one kept
    /// connection (`CurlHandles`), counted by a proxy in front of the receiver.
    @Test func theRequestsOfAnUploadShareOneConnection() throws {
        let directory = try TemporaryDirectory()
        let size = 6 << 20
        let file = try directory.makeFile("chunks.bin", size: size)
        let receiver = try Receiver("tus_receiver.py", [directory.path + "/server"])
        let port = try #require(Int(receiver.base.split(separator: ":").last ?? ""))
        let proxy = try CountingProxy(targetPort: port)
        defer { proxy.stop() }
        let response = try TusUploader.upload(TusRequest(url: proxy.url + "/files", file: file, chunkSize: 1 << 20), retry: fast, onUploadURL: { _ in })
        #expect(response.header("Upload-Offset") == "\(size)")
        #expect(proxy.connections == 1, "a POST and 6 PATCHes over \(proxy.connections) connections")
    }

    @Test func anEmptyFileIsCompleteOnCreation() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("empty.txt", text: "")
        let stored = directory.path + "/server"
        let receiver = try Receiver("tus_receiver.py", [stored])
        let recorded = Box<String?>(nil)
        let response = try TusUploader.upload(
            TusRequest(url: receiver.base + "/files/", file: file), retry: fast, onUploadURL: { recorded.value = $0 })
        #expect(response.status == 201)
        let id = try #require(recorded.value?.split(separator: "/").last)
        #expect(FileManager.default.fileExists(atPath: "\(stored)/\(id)"))
    }

    @Test func aResumeURLTheServerLostStartsAfresh() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("small.bin", size: 1 << 20)
        let stored = directory.path + "/server"
        let receiver = try Receiver("tus_receiver.py", [stored])
        let recorded = Box<String?>(nil)
        let stale = receiver.base + "/files/0123456789abcdef0123456789abcdef"
        let response = try TusUploader.upload(
            TusRequest(url: receiver.base + "/files", file: file), resumeURL: stale, retry: fast, onUploadURL: { recorded.value = $0 })
        #expect(response.status == 204)
        let fresh = try #require(recorded.value)
        #expect(fresh != stale)
        let id = try #require(fresh.split(separator: "/").last)
        #expect(try sha256(ofFile: "\(stored)/\(id)") == (try sha256(ofFile: file)))
    }

    @Test func fieldsReachTheServerAsUploadMetadata() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("report.csv", size: 4096)
        let stored = directory.path + "/server"
        let receiver = try Receiver("tus_receiver.py", [stored])
        let recorded = Box<String?>(nil)
        let request = TusRequest(
            url: receiver.base + "/files", file: file, fields: [("project", "x"), ("note", "héllo, wörld = 1"), ("filetype", "text/plain")])
        _ = try TusUploader.upload(request, retry: fast, onUploadURL: { recorded.value = $0 })
        let id = try #require(recorded.value?.split(separator: "/").last)
        let info = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: "\(stored)/\(id).info"))) as? [String: Any])
        let metadata = try #require(info["metadata"] as? [String: Any], "\(info)")
        #expect(metadata["project"] as? String == "x")
        #expect(metadata["note"] as? String == "héllo, wörld = 1")
        #expect(metadata["filename"] as? String == "report.csv")
        #expect(metadata["filetype"] as? String == "text/plain")
    }

    @Test func aFieldNameTusCannotCarryIsRefusedBeforeAnyRequest() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("a.bin", size: 16)
        let error = #expect(throws: HaulError.self) {
            try TusUploader.upload(TusRequest(url: "http://127.0.0.1:9/files", file: file, fields: [("two words", "x")]), onUploadURL: { _ in })
        }
        #expect(error?.code == .usage)
    }
}
