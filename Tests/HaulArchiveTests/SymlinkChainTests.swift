import Foundation
import HaulArchive
import HaulCore
import HaulTestSupport
import Testing

/// Links that are each harmless when created but escape once all are in place (Fixtures/symlinks.py)
/// are refused as a whole, even with `allowSymlinks`: no destination, no staging, nothing outside.
@Suite struct SymlinkChainTests {
    @Test(arguments: ["reversed.tar", "reversed.zip", "climb.tar", "climb.zip", "nested.tar", "loop.tar"])
    func refusedBeforePublishing(_ file: String) throws {
        let temp = try TemporaryDirectory()
        try runChecked(["python3", fixture("symlinks.py"), temp.sub("corpus")])
        let parent = temp.sub("work/inner")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let error = extractionError {
            _ = try Extractor.extract(archive: temp.sub("corpus/\(file)"), to: "\(parent)/dest", allowSymlinks: true)
        }
        #expect(error?.code == .unsafeSymlink, "\(error.map(String.init(describing:)) ?? "no error")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent).isEmpty, "no destination and no staging left")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.sub("work")) == ["inner"])
    }

    @Test func linksThatStayInsideAreStillCreated() throws {
        let temp = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: temp.sub("tree/d/e"), withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: temp.sub("tree/file")))
        // `a → b/..` before `b → .`, one level down: a resolves to the top of the destination, inside.
        try FileManager.default.createSymbolicLink(atPath: temp.sub("tree/d/e/a"), withDestinationPath: "b/..")
        try FileManager.default.createSymbolicLink(atPath: temp.sub("tree/d/e/b"), withDestinationPath: ".")
        try FileManager.default.createSymbolicLink(atPath: temp.sub("tree/d/up"), withDestinationPath: "e/a/../file")
        try runChecked(["tar", "-cf", temp.sub("links.tar"), "-C", temp.sub("tree"), "."])
        let summary = try Extractor.extract(archive: temp.sub("links.tar"), to: temp.sub("out"), allowSymlinks: true)
        #expect(summary.symlinks == 3)
        #expect(try snapshot(temp.sub("out")) == snapshot(temp.sub("tree")))
    }
}
