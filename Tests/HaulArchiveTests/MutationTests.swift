import Foundation
import HaulArchive
import HaulCore
import HaulTestSupport
import Testing

/// Thousands of truncated and bit-flipped copies of valid archives give a `HaulError` or the exact tree,
/// never a crash, a hang or a wrong file.
@Suite struct MutationTests {
    /// A tree of non-empty files with ASCII names: the parts of a zip no checksum covers (modes, times,
    /// the type of an empty entry, the name encoding flag) are left out so that a success must be exact.
    private func makeTree(at root: String) throws {
        var rng = SplitMix64(seed: 7)
        try FileManager.default.createDirectory(atPath: "\(root)/a/b", withIntermediateDirectories: true)
        try Data((0..<400).map { "row \($0)\n" }.joined().utf8).write(to: URL(fileURLWithPath: "\(root)/a/text.txt"))
        try Data(rng.bytes(3000)).write(to: URL(fileURLWithPath: "\(root)/a/b/noise.bin"))
        try Data("short".utf8).write(to: URL(fileURLWithPath: "\(root)/top.txt"))
    }

    private func mutate(_ archive: [UInt8], count: Int, seed: UInt64, format: String) throws {
        let temp = try TemporaryDirectory()
        try makeTree(at: temp.sub("tree"))
        let expected = try snapshot(temp.sub("tree"), modes: false)
        var rng = SplitMix64(seed: seed)
        var refused = 0
        for round in 0..<count {
            var bytes = archive
            if round % 4 == 0 {
                bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count))))
            } else {
                for _ in 0..<(1 + Int(rng.next() % 2)) {
                    bytes[Int(rng.next() % UInt64(bytes.count))] ^= 1 << UInt8(rng.next() % 8)
                }
            }
            let path = temp.sub("m\(round).\(format)")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let destination = temp.sub("out\(round)")
            do {
                _ = try Extractor.extract(archive: path, to: destination)
                let got = try snapshot(destination, modes: false)
                #expect(got == expected, "round \(round) extracted a different tree: \(got.keys.sorted())")
                try FileManager.default.removeItem(atPath: destination)
            } catch is HaulError {
                refused += 1
                #expect(!FileManager.default.fileExists(atPath: destination))
            }
            try FileManager.default.removeItem(atPath: path)
        }
        #expect(refused > count / 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path) == ["tree"], "no staging directory left behind")
    }

    @Test func mutatedZips() throws {
        let temp = try TemporaryDirectory()
        try makeTree(at: temp.sub("tree"))
        _ = try ZipWriter.create(archive: temp.sub("a.zip"), inputs: [temp.sub("tree")])
        try mutate(Array(try Data(contentsOf: URL(fileURLWithPath: temp.sub("a.zip")))), count: 2500, seed: 1, format: "zip")
    }

    @Test func mutatedInfoZipArchivesWithDataDescriptors() throws {
        let temp = try TemporaryDirectory()
        try makeTree(at: temp.sub("tree"))
        try runChecked(["sh", "-c", "cd \"$0\" && zip -q -r -fd - . > \"$1\"", temp.sub("tree"), temp.sub("a.zip")])
        try mutate(Array(try Data(contentsOf: URL(fileURLWithPath: temp.sub("a.zip")))), count: 1500, seed: 2, format: "zip")
    }

    @Test func mutatedTarGz() throws {
        let temp = try TemporaryDirectory()
        try makeTree(at: temp.sub("tree"))
        try runChecked(["tar", "-czf", temp.sub("a.tgz"), "-C", temp.sub("tree"), "."])
        try mutate(Array(try Data(contentsOf: URL(fileURLWithPath: temp.sub("a.tgz")))), count: 1500, seed: 3, format: "tgz")
    }
}
