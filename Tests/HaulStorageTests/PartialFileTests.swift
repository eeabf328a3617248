import Foundation
import HaulStorage
import Testing

/// Whether `/dev/shm` is a tmpfs this test may write to.
private let sharedMemory: String? = {
    let folder = "/dev/shm"
    let fd = open(folder, O_RDONLY | O_DIRECTORY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return MemoryFileSystem.contains(fd) && access(folder, W_OK) == 0 ? folder : nil
}()

@Suite("partial files: full size, reserved on disk, sparse in memory")
struct PartialFileTests {
    /// Creates the partial file of a `size`-byte transfer under `folder`; returns its size and allocated bytes.
    func prepare(in folder: String, size: Int64) throws -> (size: Int64, allocated: Int64) {
        let root = try StorageRoot(folder)
        let files = try TransferFiles(root: root, relative: "big.bin")
        try files.preparePartial(size: size, generation: 0, url: "http://example.test/file")
        var info = stat()
        #expect(stat(files.partial(generation: 0), &info) == 0)
        return (Int64(info.st_size), Int64(info.st_blocks) * 512)
    }

    @Test("on tmpfs the partial file has its full size but no pages until the bytes come", .enabled(if: sharedMemory != nil))
    func sparseInMemory() throws {
        let folder = sharedMemory! + "/haul-partial-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = try prepare(in: folder, size: 8 << 20)
        #expect(file.size == 8 << 20)
        #expect(file.allocated < 1 << 20, "posix_fallocate reserved \(file.allocated) bytes of memory up front")
    }

    @Test("elsewhere the partial file has its full size (reserved where the file system can)")
    func fullSizeOnDisk() throws {
        let folder = NSTemporaryDirectory() + "haul-partial-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = try prepare(in: folder, size: 8 << 20)
        #expect(file.size == 8 << 20)
    }
}
