import Foundation
import HaulCore
import HaulQueue
import Testing

/// `--header @FILE`: headers read from a file, as curl's `-H @FILE`.
@Suite("header files")
struct HeaderFileTests {
    @Test("one header a line; blank lines and # comments skipped; CRLF and surrounding blanks ignored")
    func parsing() throws {
        let headers = try HeaderFile.parse(
            "# tokens for the mirror\n\nAuthorization: Bearer abc.def\r\n  X-Api-Key:  k3y  \n\t\n#X-Off: 1\nAccept: */*", source: "--header @h")
        #expect(
            headers == [
                Header(name: "Authorization", value: "Bearer abc.def"), Header(name: "X-Api-Key", value: "k3y"), Header(name: "Accept", value: "*/*"),
            ])
        #expect(try HeaderFile.parse("", source: "--header @h").isEmpty)
    }

    @Test("a line that is no header is refused by its number, its text not shown", arguments: ["s3cr3t", "Bad Name: s3cr3t", ": s3cr3t"])
    func malformed(line: String) {
        let error = #expect(throws: HaulError.self) { try HeaderFile.parse("X-Ok: 1\n\n\(line)\n", source: "--header @h") }
        #expect(error?.message == "--header @h: line 3 is not a header")
        #expect(error.map { !"\($0)".contains("s3cr3t") } == true)
    }

    @Test("@FILE and inline headers keep their order; an unreadable file is named")
    func expanding() throws {
        let files = ["/a": "X-A: 1\nX-B: 2\n"]
        let headers = try HeaderFile.expand(["X-First: 0", "@/a", "X-Last: 3"], read: { files[$0] })
        #expect(headers.map(\.name) == ["X-First", "X-A", "X-B", "X-Last"])
        let missing = #expect(throws: HaulError.self) { try HeaderFile.expand(["@/missing"], flag: "--header", read: { files[$0] }) }
        #expect(missing?.message == "cannot read --header @/missing")
        #expect(throws: HaulError.self) { try HeaderFile.expand(["@"], read: { files[$0] }) }
    }
}
