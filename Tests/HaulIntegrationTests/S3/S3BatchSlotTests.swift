import Foundation
import HaulTestSupport
import Testing

/// An S3 probe batch gives its host slots back as soon as its requests end, as a POSIX one does,
/// not only once S3 has answered its `PutObject`s and the batch has recorded its files.
@Suite("S3 storage: probe batches give their host slots back early")
struct S3BatchSlotTests {
    @Test("an S3 batch's slots are free while its PutObjects still wait for the store's answer")
    func slotsBackBeforeTheAnswers() throws {
        let (fake, port) = try ScriptOrigin.start("flaky_s3.py", ["--hold-puts"], what: "held S3")
        defer {
            fake.signal(SIGKILL)
            _ = fake.wait(timeout: 5)
        }
        let store = "http://127.0.0.1:\(port)"
        let cluster = try Cluster("s3-batch-slots")
        let folder = "s3slots/" + UUID().uuidString.prefix(8)
        let files = try (0..<4).map { index in try Origin.file("\(folder)/f\(index).bin", size: 10_000 + index) }
        let ids = try files.enumerated().map { index, file in try cluster.enqueue(Harness.origin + file.path, ["--dest", "f\(index).bin"]) }
        var environment = S3Bucket.environment
        environment["AWS_ENDPOINT_URL"] = store
        let worker = try cluster.startWorker(["--concurrency", "2"], environment: environment, storage: "s3://held")
        func log() throws -> [String] {
            let answer = try Run.program("/usr/bin/curl", ["-sS", store + "/_log"], environment: [:])
            return (try JSONSerialization.jsonObject(with: Data(answer.stdout.utf8)) as? [String]) ?? []
        }
        // Every body went out whole (so every request of the batch has ended); no answer yet.
        let sent = try Harness.waitUntil(timeout: 60) { try log().filter { $0.hasPrefix("HELD PUT /held/") }.count == files.count }
        #expect(sent, "the batch put every file: \((try? log()) ?? [])\n\(worker.stderr)")
        let released = try Harness.waitUntil(timeout: 15) {
            // A slot is a planning row's (`holds_slot` is true by default, also on a batch's rest,
            // which stays pending under its lease).
            try cluster.database.scalar("SELECT count(*) FROM transfers WHERE state = 'planning' AND holds_slot") == "0"
        }
        #expect(
            released,
            "the batch gave its slots back before the store answered: \((try? cluster.database.scalar("SELECT string_agg(id || ' ' || state || ' ' || holds_slot, ', ') FROM transfers")) ?? "")\n\(worker.stderr)"
        )
        // Not recorded yet: a slot holder is `planning`, the rest of the batch still `pending` (leased in place).
        #expect(try ids.allSatisfy { ["planning", "pending"].contains(try cluster.state($0)) }, "not recorded yet")
        _ = try Run.program("/usr/bin/curl", ["-sS", store + "/_release"], environment: [:])
        #expect(try cluster.waitFinal(ids) == Array(repeating: "done", count: files.count), "\(worker.stderr)")
        for index in files.indices {
            let stored = try Run.program(
                "/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{size_download}", store + "/held/f\(index).bin"], environment: [:])
            #expect(stored.stdout == String(10_000 + index), "f\(index).bin: \(stored.stdout)")
        }
    }
}
