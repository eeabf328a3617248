import Foundation
import HaulCore
import HaulTestSupport
import Synchronization
import Testing

@testable import HaulArchive

/// A sink that keeps files in memory, as an object store would hold them: no directories, no holes.
private final class MemorySink: EntrySink, @unchecked Sendable {
    let files = Mutex<[String: Data]>([:])
    let names = EntryNames()
    let concurrency = 2
    let keepsHoles = false

    func makeDirectory(_ path: String, modificationTime: Int64?) throws { try names.claimDirectory(path) }

    func createFile(_ path: String, sizeBound: Int64, executable: Bool, modificationTime: Int64) throws -> any EntryWriter {
        try names.claimFile(path)
        return MemoryFile { data in self.files.withLock { $0[path] = data } }
    }

    func createSymlink(_ path: String, target: String) throws { Issue.record("no symlink expected") }
}

private final class MemoryFile: EntryWriter {
    var data = Data()
    let done: (Data) -> Void

    init(done: @escaping (Data) -> Void) { self.done = done }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws {
        #expect(offset >= Int64(data.count), "never before the end")
        data.append(Data(count: Int(offset) - data.count))
        data.append(contentsOf: bytes)
    }

    func finish(size: Int64) throws {
        data.append(Data(count: Int(size) - data.count))
        done(data)
    }

    func abort() {}
}

@Suite struct StreamedExtractionTests {
    @Test(
        "an archive read as a stream gives the files a file gives; tar, tar.gz and gz stream, zip is spooled",
        arguments: [
            ("tar", ["tar", "-cf"], Extractor.Reading.streamed), ("tar.gz", ["tar", "-czf"], .streamed),
            ("zip", ["bsdtar", "--format", "zip", "-cf"], .spooled),
        ])
    func sameFiles(suffix: String, command: [String], reading: Extractor.Reading) throws {
        let temp = try TemporaryDirectory()
        try makeSampleTree(at: temp.sub("tree"))
        try runChecked(command + [temp.sub("a.\(suffix)"), "-C", temp.sub("tree"), "."])
        _ = try Extractor.extract(archive: temp.sub("a.\(suffix)"), to: temp.sub("disk"))
        let onDisk = try snapshot(temp.sub("disk"), modes: false).compactMapValues { node -> Data? in
            if case .file(let data, _) = node { return data }
            return nil
        }
        let sink = MemorySink()
        let file = try InputFile(path: temp.sub("a.\(suffix)"))
        let result = try Extractor.extract(
            stream: FileSource(file), name: "a.\(suffix)", size: file.size, spool: open(temp.sub("spool"), O_RDWR | O_CREAT | O_EXCL, 0o600), into: sink)
        #expect(result.reading == reading)
        // The spool file is given to the extraction; only a spooled archive is copied into it.
        let spooled = (try FileManager.default.attributesOfItem(atPath: temp.sub("spool"))[.size] as? Int ?? 0) > 0
        #expect(spooled == (reading == .spooled))
        #expect(sink.files.withLock { $0 } == onDisk)
        #expect(result.summary.files == onDisk.count)
    }

    @Test("a lone .gz streams under its stored name, or the stream's name less .gz")
    func loneGzip() throws {
        let temp = try TemporaryDirectory()
        let path = try temp.makeFile("data.bin", size: 300_000)
        try runChecked(["gzip", "-k", "-n", path])
        let sink = MemorySink()
        let file = try InputFile(path: path + ".gz")
        let result = try Extractor.extract(
            stream: FileSource(file), name: "renamed.bin.gz", size: file.size, spool: open(temp.sub("spool"), O_RDWR | O_CREAT | O_EXCL, 0o600), into: sink)
        #expect(result.reading == .streamed)
        #expect(sink.files.withLock { $0 } == ["renamed.bin": try Data(contentsOf: URL(fileURLWithPath: path))])
    }

    @Test("a sparse tar entry reaches a sink without holes as its real bytes, zeros included")
    func sparseAsZeros() throws {
        let temp = try TemporaryDirectory()
        var rng = SplitMix64(seed: 3)
        var expected = Data(count: 3 << 20)
        expected.replaceSubrange(1_000_000..<1_070_000, with: rng.bytes(70_000))
        expected.replaceSubrange((3 << 20) - 10..<(3 << 20), with: rng.bytes(10))
        try FileManager.default.createDirectory(atPath: temp.sub("tree"), withIntermediateDirectories: true)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: try temp.makeFile("tree/disk.img", size: 0)))
        for range in [1_000_000..<1_070_000, (3 << 20) - 10..<(3 << 20)] {
            try handle.seek(toOffset: UInt64(range.lowerBound))
            try handle.write(contentsOf: expected[range])
        }
        try handle.close()
        try runChecked(["tar", "--sparse", "--format=pax", "-cf", temp.sub("s.tar"), "-C", temp.sub("tree"), "disk.img"])
        let sink = MemorySink()
        let file = try InputFile(path: temp.sub("s.tar"))
        _ = try Extractor.extract(
            stream: FileSource(file), name: "s.tar", size: file.size, spool: open(temp.sub("spool"), O_RDWR | O_CREAT | O_EXCL, 0o600), into: sink)
        #expect(sink.files.withLock { $0["disk.img"] } == expected)
    }

    @Test("only a prefix that settles the format streams: zip, unknown bytes and a gzip prefix that ends too soon do not")
    func streamableFormats() throws {
        let temp = try TemporaryDirectory()
        let path = try temp.makeFile("r.bin", size: 100_000)
        try runChecked(["tar", "-cf", temp.sub("r.tar"), "-C", temp.path, "r.bin"])
        let tar = [UInt8](try Data(contentsOf: URL(fileURLWithPath: temp.sub("r.tar"))))
        #expect(Extractor.streamableFormat(Array(tar.prefix(1 << 16)), complete: false) == .tar)
        #expect(Extractor.streamableFormat([0x50, 0x4B, 0x03, 0x04] + [UInt8](repeating: 0, count: 600), complete: false) == nil)
        #expect(Extractor.streamableFormat(Array("just some text".utf8), complete: true) == nil)
        // The first 40 bytes of a gzip member that inflates to far more: not settled yet.
        try runChecked(["gzip", "-k", path])
        let gzip = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path + ".gz")))
        #expect(Extractor.streamableFormat(Array(gzip.prefix(40)), complete: false) == nil)
        #expect(Extractor.streamableFormat(gzip, complete: true) == .gzip)
    }
}
