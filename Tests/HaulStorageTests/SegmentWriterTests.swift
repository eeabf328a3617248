import Foundation
import HaulStorage
import HaulTestSupport
import Testing

@Suite("segment writer: chunks gathered into large writes at the segment's offset")
struct SegmentWriterTests {
    /// Chunk sizes as libcurl hands them over (at most 16 KiB each) and larger ones: tiny, odd,
    /// around the buffer's size and past it, in seeded random order.
    static func chunkSizes(seed: UInt64, total: Int) -> [Int] {
        var random = SplitMix64(seed: seed)
        let shapes = [1, 7, 4096, 16_000, 16 << 10, (64 << 10) + 3, 512 << 10, (1 << 20) - 1, 1 << 20, (1 << 20) + 5]
        var sizes: [Int] = []
        var left = total
        while left > 0 {
            let size = min(left, shapes[Int(random.next() % UInt64(shapes.count))])
            sizes.append(size)
            left -= size
        }
        return sizes
    }

    @Test("every byte lands at its offset, in order, whatever the chunk sizes", arguments: [1, 2, 3, 4] as [UInt64])
    func bytesAtTheirOffsets(seed: UInt64) throws {
        let folder = try TemporaryDirectory("segment-writer")
        let root = try StorageRoot(folder.path)
        let path = folder.sub("file.haul-partial")
        let offset = 3 << 20 + 17
        let total = 6 << 20
        // The planner creates the file at full size; the writer fills one segment of it.
        #expect(FileManager.default.createFile(atPath: path, contents: Data(count: offset + total + 100)))
        var random = SplitMix64(seed: seed)
        let payload = random.bytes(total)
        let writer = SegmentWriter()
        try writer.open(path: path, offset: Int64(offset), create: false, root: root)
        var position = 0
        for size in Self.chunkSizes(seed: seed, total: total) {
            try payload[position..<(position + size)].withUnsafeBytes { try writer.write($0) }
            position += size
            #expect(writer.bytesAccepted == Int64(position))
        }
        try writer.flush()
        writer.close()
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(written.count == offset + total + 100)
        #expect(written[0..<offset].allSatisfy { $0 == 0 })
        #expect(Array(written[offset..<(offset + total)]) == payload)
        #expect(written[(offset + total)...].allSatisfy { $0 == 0 })
    }

    @Test("a chunk larger than the buffer after buffered bytes keeps them in front of it")
    func largeChunkAfterBufferedBytes() throws {
        let folder = try TemporaryDirectory("segment-writer")
        let root = try StorageRoot(folder.path)
        let path = folder.sub("part")
        let writer = SegmentWriter()
        try writer.open(path: path, offset: 0, create: true, root: root)
        let small = [UInt8](repeating: 1, count: 10)
        let large = [UInt8](repeating: 2, count: (1 << 20) + 1)
        try small.withUnsafeBytes { try writer.write($0) }
        try large.withUnsafeBytes { try writer.write($0) }
        try small.withUnsafeBytes { try writer.write($0) }
        try writer.flush()
        writer.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(small + large + small))
    }
}
