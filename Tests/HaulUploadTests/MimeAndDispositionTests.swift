import HaulTestSupport
import Testing

@testable import HaulUpload

@Suite struct MimeTypesTests {
    let table = MimeTypes(
        contents: """
            # comment line
            application/gzip\t\t\tgz
            application/x-tar-gz\t\ttar.gz
            image/png\t\t\tpng PNG
            text/csv\tcsv # trailing comment
            not-a-type\tbogus
            """)

    @Test func longestSuffixWins() {
        #expect(table.type(forFilename: "backup.tar.gz") == "application/x-tar-gz")
        #expect(table.type(forFilename: "notes.gz") == "application/gzip")
        #expect(table.type(forFilename: "a.b.c.tar.gz") == "application/x-tar-gz")
    }

    @Test func lookupIgnoresCaseAndDirectories() {
        #expect(table.type(forFilename: "/some/dir.png/PHOTO.PnG") == "image/png")
        #expect(table.type(forFilename: "Q3.CSV") == "text/csv")
    }

    @Test func unknownNamesFallBack() {
        #expect(table.type(forFilename: "README") == MimeTypes.fallback)
        #expect(table.type(forFilename: "x.bogus") == MimeTypes.fallback)
        #expect(table.type(forFilename: "trailing.") == MimeTypes.fallback)
        #expect(MimeTypes(path: "/nonexistent/mime.types").type(forFilename: "a.png") == MimeTypes.fallback)
    }

    @Test func systemTableAnswersCommonTypes() {
        let system = MimeTypes()
        #expect(system.type(forFilename: "a.png") == "image/png")
        #expect(system.type(forFilename: "a.csv") == "text/csv")
        #expect(system.type(forFilename: "a.tar.gz") == "application/gzip")
        #expect(system.type(forFilename: "a.qqqzzz") == "application/octet-stream")
    }
}

@Suite struct FormDispositionTests {
    @Test func quotesAreEscapedTheWayBrowsersDo() {
        #expect(FormDisposition.quote("plain.txt") == "\"plain.txt\"")
        #expect(FormDisposition.quote("say \"hi\".txt") == "\"say %22hi%22.txt\"")
        #expect(FormDisposition.quote("a\r\nb") == "\"a%0D%0Ab\"")
        #expect(FormDisposition.quote("back\\slash") == "\"back\\slash\"")
        #expect(FormDisposition.quote("Ünïcödé ✓ 🚚.png") == "\"Ünïcödé ✓ 🚚.png\"")
    }

    @Test func headerCarriesNameAndOptionalFilename() {
        #expect(FormDisposition.header(name: "note") == "Content-Disposition: form-data; name=\"note\"")
        #expect(
            FormDisposition.header(name: "file", filename: "x y.png")
                == "Content-Disposition: form-data; name=\"file\"; filename=\"x y.png\"")
        #expect(!FormDisposition.header(name: "f", filename: "ü").contains("filename*"))
    }

    @Test func fieldsParseAtTheFirstEqualsSign() throws {
        #expect(try MultipartRequest.parseField("a=b=c") == ("a", "b=c"))
        #expect(try MultipartRequest.parseField("empty=") == ("empty", ""))
        #expect(throws: (any Error).self) { try MultipartRequest.parseField("=x") }
        #expect(throws: (any Error).self) { try MultipartRequest.parseField("novalue") }
    }

    @Test func headerLinesMustBeSingleNameValueLines() {
        #expect(throws: (any Error).self) { try MultipartRequest.validateHeaders(["X-A: 1\r\nX-B: 2"], contentType: nil) }
        #expect(throws: (any Error).self) { try MultipartRequest.validateHeaders(["NoColon"], contentType: nil) }
        #expect(throws: (any Error).self) { try MultipartRequest.validateHeaders([], contentType: "text/plain\nX: y") }
        #expect(throws: Never.self) { try MultipartRequest.validateHeaders(["X-A: 1"], contentType: "text/plain") }
    }
}
