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
}
