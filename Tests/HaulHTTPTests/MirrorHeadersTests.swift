import HaulCore
import HaulHTTP
import Testing

/// RFC 6249 mirrors and RFC 3230 digests from an origin's response headers.
@Suite("mirror headers")
struct MirrorHeadersTests {
    @Test("rel=duplicate links by pri, relative ones resolved; other relations and schemes left out")
    func duplicates() {
        let link = """
            <http://b.example/x.iso>; rel=duplicate; pri=2, <https://a.example/x.iso>; rel="duplicate"; pri=1; geo=de, \
            </other/x.iso>; rel=duplicate, <ftp://c.example/x.iso>; rel=duplicate, <http://d.example/x.torrent>; rel=describedby, \
            <http://o.example/x.iso>; rel=duplicate
            """
        #expect(
            MirrorHeaders.duplicates(link, base: "http://o.example/x.iso") == [
                "https://a.example/x.iso", "http://b.example/x.iso", "http://o.example/other/x.iso",
            ])
        #expect(MirrorHeaders.duplicates(nil, base: "http://o.example/x.iso").isEmpty)
        #expect(MirrorHeaders.duplicates("garbage, <>;", base: "http://o.example/x.iso").isEmpty)
    }

    @Test("the strongest digest Haul verifies, base64 decoded; wrong lengths ignored")
    func digest() {
        // sha256("") and md5("").
        let sha256 = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        #expect(
            MirrorHeaders.digest("MD5=1B2M2Y8AsgTpgAmY7PhCfg==, SHA-256=\(sha256)")
                == Checksum(algorithm: .sha256, hex: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        #expect(MirrorHeaders.digest("md5=1B2M2Y8AsgTpgAmY7PhCfg==")?.algorithm == .md5)
        #expect(MirrorHeaders.digest("SHA-256=AAAA") == nil)
        #expect(MirrorHeaders.digest("UNIXsum=30637") == nil)
    }
}
