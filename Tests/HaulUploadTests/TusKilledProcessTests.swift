import Foundation
import HaulCore
import HaulHTTP
import HaulTestSupport
import Testing

@testable import HaulUpload

/// The uploader binary built next to the test bundle: `haul` in the main package, else this
/// helper package's `upload-bench-tool`; both offer `upload FILE URL --protocol tus`.
let uploaderBinary: String? = {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    return ["haul", "upload-bench-tool"].map { directory.appendingPathComponent($0).path }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
}()

/// A tus upload by a child process that is SIGKILLed midway, then resumed in-process.
@Suite(.serialized, .enabled(if: uploaderBinary != nil, "needs the haul or upload-bench-tool binary"))
struct TusKilledProcessTests {
    init() { _ = curlGlobalInit }

    @Test func anUploadOfAKilledProcessResumes() throws {
        let directory = try TemporaryDirectory()
        let size = 32 << 20
        let file = try directory.makeFile("killed.bin", size: size)
        let stored = directory.path + "/server"
        // About 16 MiB/s, so the upload takes seconds and the kill lands midway.
        let receiver = try Receiver("tus_receiver.py", [stored, "\(16 << 20)"])
        let child = Process()
        child.executableURL = URL(fileURLWithPath: try #require(uploaderBinary))
        child.arguments = ["upload", file, receiver.base + "/files", "--protocol", "tus"]
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        var polls = 0
        while try receiver.json("/stats")["patch_bytes"] as? Int ?? 0 < 4 << 20, child.isRunning, polls < 3000 {
            Thread.sleep(forTimeInterval: 0.01)
            polls += 1
        }
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal)

        try receiver.waitUntilIdle()
        let id = try #require(try FileManager.default.contentsOfDirectory(atPath: stored).first { !$0.hasPrefix(".") && !$0.hasSuffix(".info") })
        let uploadURL = receiver.base + "/files/" + id
        let sentBefore = try #require(try receiver.json("/stats")["patch_bytes"] as? Int)
        #expect(sentBefore < size)
        let response = try TusUploader.upload(
            TusRequest(url: receiver.base + "/files", file: file), resumeURL: uploadURL,
            retry: RetryPolicy(attempts: 4, baseDelay: 0.01, maxDelay: 0.05), onUploadURL: { _ in })
        #expect(response.status == 204)
        let sentOnResume = try #require(try receiver.json("/stats")["patch_bytes"] as? Int) - sentBefore
        #expect(sentOnResume < size)
        #expect(try sha256(ofFile: "\(stored)/\(id)") == (try sha256(ofFile: file)))
    }
}
