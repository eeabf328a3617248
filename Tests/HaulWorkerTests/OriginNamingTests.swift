import Foundation
import HaulArchive
import HaulCore
import HaulHTTP
import Testing

@testable import HaulWorker

/// The name a file gets from its origin (`curl -OJ`), and the names an origin may not give.
@Suite("naming from the origin")
struct OriginNamingTests {
    @Test("Content-Disposition names a file, cleaned; else the URL's last segment")
    func named() throws {
        let disposition = ResponseHead(status: 200, headers: ["content-disposition": "attachment; filename*=UTF-8''ev%1Bil%0Aname.txt"])
        #expect(try Planner.name(head: disposition, url: "http://o/x") == "evilname.txt")
        #expect(try Planner.name(head: ResponseHead(status: 200), url: "http://o/dir/file.iso?x=1") == "file.iso")
    }

    @Test("a name of Haul's temporaries from the origin is refused, with how to name the file instead")
    func reservedName() {
        let head = ResponseHead(status: 200, headers: ["content-disposition": #"attachment; filename="../../a.iso.haul-partial""#])
        #expect {
            try Planner.name(head: head, url: "http://o/x")
        } throws: { error in
            let error = error as? HaulError
            return error?.message.contains("a name Haul keeps for the files of downloads in progress") == true
                && error?.hint == "name the file yourself with -o FILE (haul get) or --dest (haul enqueue)"
        }
    }

    @Test("names the origin gives a get's files are held by the first transfer that takes them")
    func heldNames() {
        let names = OriginNames()
        #expect(names.take("/out/x.bin", for: 1) == nil)
        #expect(names.take("/out/x.bin", for: 1) == nil, "a transfer planned again keeps its own name")
        #expect(names.take("/out/x.bin", for: 2) == 1)
        #expect(names.take("/out/y.bin", for: 2) == nil)
    }

    @Test("--extract's default folder is the file's name without its archive extension, cut by bytes")
    func defaultExtractionFolder() {
        #expect(Extractor.defaultFolder(for: "dir/data.TGZ") == "dir/data")
        #expect(Extractor.defaultFolder(for: "a.tar.gz") == "a")
        #expect(Extractor.defaultFolder(for: "x\u{600}.zip").sameBytes(as: "x\u{600}"))
        #expect(Extractor.defaultFolder(for: ".zip") == ".zip.d")
        #expect(Extractor.defaultFolder(for: "notes.txt") == "notes.txt.d")
    }
}
