import Foundation
import HaulCore
import HaulHTTP
import HaulTestSupport
import Testing

@testable import HaulUpload

/// Uploads to `Receivers/multipart_receiver.py`, which parses with the `multipart` package in
/// strict mode and answers with the parts it saw.
@Suite(.serialized) struct MultipartUploadTests {
    let fast = RetryPolicy(attempts: 4, baseDelay: 0.01, maxDelay: 0.05)

    init() { _ = curlGlobalInit }

    private func parts(of response: UploadResponse) throws -> [[String: Any]] {
        let summary = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return try #require(summary?["parts"] as? [[String: Any]])
    }

    @Test func largeFileArrivesByteForByte() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("large.haulblob", size: 256 << 20)
        let receiver = try Receiver("multipart_receiver.py")
        let sent = Box<Int64>(0)
        let response = try MultipartUploader.send(
            MultipartRequest(url: receiver.base + "/upload", files: [file]), retry: fast, progress: { now, _ in sent.value = now })
        #expect(response.status == 200)
        #expect(response.reason == "OK")
        let part = try #require(try parts(of: response).first)
        #expect(part["size"] as? Int == 256 << 20)
        #expect(part["sha256"] as? String == (try sha256(ofFile: file)))
        #expect(part["content_type"] as? String == "application/octet-stream")
        #expect(sent.value > 256 << 20)
    }

    @Test func fieldsNamesAndTypesSurviveTheStrictParser() throws {
        let directory = try TemporaryDirectory()
        let names = ["photo.png", "Table Q3.CSV", "backup.tar.gz", "we\"ird \\ näme ✓.unknownext"]
        let files = try names.map { try directory.makeFile($0, text: "contents of \($0)\n") }
        let fields = [("note", "héllo wörld ✓ 🚚"), ("empty", ""), ("multi", "line one\r\nline two")]
        let receiver = try Receiver("multipart_receiver.py")
        let response = try MultipartUploader.send(
            MultipartRequest(url: receiver.base + "/upload", files: files, fields: fields, fileField: "upload"), retry: fast)
        let got = try parts(of: response)
        try #require(got.count == fields.count + files.count)
        for (part, field) in zip(got, fields) {
            #expect(part["name"] as? String == field.0)
            #expect(part["value"] as? String == field.1)
            #expect(part["filename"] is NSNull)
        }
        let expectedTypes = ["image/png", "text/csv", "application/gzip", "application/octet-stream"]
        for (index, part) in got.dropFirst(fields.count).enumerated() {
            #expect(part["name"] as? String == "upload")
            #expect(part["filename"] as? String == names[index])
            #expect(part["content_type"] as? String == expectedTypes[index])
            #expect(part["sha256"] as? String == (try sha256(ofFile: files[index])))
        }
    }

    @Test func overridesAndHeadersAreSent() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("data.bin", text: "{}")
        let receiver = try Receiver("multipart_receiver.py")
        let request = MultipartRequest(
            url: receiver.base + "/upload", files: [file], fileField: "document", filename: "Résumé \"final\".json",
            contentType: "application/json", headers: ["X-Trace: 42"])
        let part = try #require(try parts(of: MultipartUploader.send(request, retry: fast)).first)
        #expect(part["name"] as? String == "document")
        #expect(part["filename"] as? String == "Résumé \"final\".json")
        #expect(part["content_type"] as? String == "application/json")
    }

    @Test func serverErrorsAreRetriedFromTheStart() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("retry.csv", size: 3 << 20)
        let receiver = try Receiver("multipart_receiver.py", ["--fail-first", "2", "--fail-status", "500"])
        let response = try MultipartUploader.send(MultipartRequest(url: receiver.base + "/upload", files: [file]), retry: fast)
        #expect(response.status == 200)
        #expect(try parts(of: response).first?["sha256"] as? String == (try sha256(ofFile: file)))
        #expect(try receiver.json("/stats")["requests"] as? Int == 3)
    }

    @Test func retriesStopAtTheAttemptLimit() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("retry.csv", text: "a,b\n")
        let receiver = try Receiver("multipart_receiver.py", ["--status", "503"])
        let error = #expect(throws: HaulError.self) {
            try MultipartUploader.send(MultipartRequest(url: receiver.base + "/upload", files: [file]), retry: fast)
        }
        #expect(error?.code == .serverError)
        #expect(error?.message.contains("gave up after 4 attempts") == true)
        #expect(try receiver.json("/stats")["requests"] as? Int == 4)
    }

    @Test func forbiddenFailsAtOnceWithoutLeakingCredentials() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("secret.txt", text: "x")
        let receiver = try Receiver("multipart_receiver.py", ["--status", "403"])
        let url = receiver.base.replacingOccurrences(of: "http://", with: "http://alice:hunter22@") + "/upload"
        let request = MultipartRequest(url: url, files: [file], headers: ["Authorization: Bearer tok-3141592653"])
        let error = #expect(throws: HaulError.self) { try MultipartUploader.send(request, retry: fast) }
        #expect(error?.code == .uploadRejected)
        #expect(error?.isTransient == false)
        #expect(error?.message.contains("403 Forbidden: receiver told to answer 403") == true)
        #expect(error?.description.contains("hunter22") == false)
        #expect(error?.description.contains("tok-3141592653") == false)
        #expect(try receiver.json("/stats")["requests"] as? Int == 1)
    }

    @Test func aFileChangedMidUploadFails() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("growing.log", size: 16 << 20)
        let receiver = try Receiver("multipart_receiver.py")
        let appended = Box(false)
        let error = #expect(throws: HaulError.self) {
            try MultipartUploader.send(MultipartRequest(url: receiver.base + "/upload", files: [file]), retry: fast) { sent, _ in
                guard sent > 4 << 20, !appended.value else { return }
                appended.value = true
                let handle = FileHandle(forWritingAtPath: file)
                _ = try? handle?.seekToEnd()
                try? handle?.write(contentsOf: Data("more\n".utf8))
                try? handle?.close()
            }
        }
        #expect(error?.code == .fileChanged)
    }

    @Test func cancellingStopsTheUpload() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.makeFile("big.bin", size: 32 << 20)
        let receiver = try Receiver("multipart_receiver.py")
        let sent = Box<Int64>(0)
        let error = #expect(throws: HaulError.self) {
            try MultipartUploader.send(
                MultipartRequest(url: receiver.base + "/upload", files: [file]), retry: fast,
                progress: { now, _ in sent.value = now }, shouldCancel: { sent.value > 8 << 20 })
        }
        #expect(error?.code == .canceled)
    }
}
