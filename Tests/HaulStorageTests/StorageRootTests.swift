import Foundation
import HaulCore
import HaulStorage
import HaulTestSupport
import Testing

@Suite("storage root: opening it, and the check that it is writable")
struct StorageRootTests {
    @Test("the write check leaves no name in the folder and follows no link planted there")
    func writeCheckTouchesNoName() throws {
        let folder = try TemporaryDirectory("write-check")
        let victim = try TemporaryDirectory("write-check-victim")
        let target = victim.sub("precious.txt")
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: target))
        // Names a checker could predict (earlier versions used its pid), planted as links to another user's file.
        for name in [".haul-write-check-\(getpid())", ".haul-write-check"] {
            #expect(symlink(target, folder.sub(name)) == 0)
        }
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()

        #expect(try StorageRoot(folder.path).writeProblem() == nil)

        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == before)
    }

    @Test("a folder that cannot be made or is not a folder is refused with the naming's words")
    func unusableFolders() throws {
        let folder = try TemporaryDirectory("root-naming")
        try Data("x".utf8).write(to: URL(fileURLWithPath: folder.sub("file")))
        #expect {
            try StorageRoot(folder.sub("file"), naming: .outputFolder)
        } throws: { error in
            let error = error as? HaulError
            return error?.message == "the output folder \(folder.sub("file")) is not a directory" && error?.hint == StorageRoot.Naming.outputFolder.remedy
        }
        #expect {
            try StorageRoot(folder.sub("file/sub"))
        } throws: { error in
            let error = error as? HaulError
            return error?.message == "cannot create directory \(folder.sub("file")): something that is not a directory is there"
                && error?.hint == StorageRoot.Naming.storageOption.remedy
        }
    }

    @Test("a root held open for a batch makes each folder once, and still writes through no link put in a folder's place meanwhile")
    func openedRootChecksEveryOpen() throws {
        let folder = try TemporaryDirectory("opened-root")
        let outside = try TemporaryDirectory("opened-root-outside")
        let opened = OpenedRoot(try StorageRoot(folder.path))

        let first = try opened.prepare("deep/er/a.bin")
        #expect(first == folder.sub("deep/er/a.bin"))
        var info = stat()
        #expect(stat(folder.sub("deep/er"), &info) == 0 && info.st_mode & S_IFMT == S_IFDIR)
        let fd = try opened.openFile(first, O_WRONLY | O_CREAT | O_TRUNC, doing: "create")
        close(fd)

        // The folder, made and checked for the first file, is replaced by a link out of the root.
        #expect(rename(folder.sub("deep/er"), folder.sub("deep/moved")) == 0)
        #expect(symlink(outside.path, folder.sub("deep/er")) == 0)
        let second = try opened.prepare("deep/er/b.bin")
        #expect {
            try opened.openFile(second, O_WRONLY | O_CREAT | O_TRUNC, doing: "create")
        } throws: { error in
            (error as? HaulError)?.code == .unsafePath
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)

        // A new root for the next batch checks the folder again and refuses it at once.
        #expect {
            try OpenedRoot(try StorageRoot(folder.path)).prepare("deep/er/c.bin")
        } throws: { error in
            (error as? HaulError)?.code == .unsafePath
        }
        // A path outside the root is refused, not opened.
        #expect {
            try opened.openFile(outside.sub("x.bin"), O_WRONLY | O_CREAT, doing: "create")
        } throws: { error in
            (error as? HaulError)?.code == .unsafePath
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
    }
}
