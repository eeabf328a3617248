import HaulCore
import Testing

/// Archive extensions are cut by bytes, as the file system names files, not by `Character`s.
@Suite("cutting an extension off a name")
struct ExtensionTests {
    static let cuts: [(name: String, suffix: String, base: String)] = [
        ("a.tar.gz", ".tar.gz", "a"),
        ("a.TAR.GZ", ".tar.gz", "a"),
        ("é.gz", ".gz", "é"),
        // As Characters, U+0600 joins the "." after it: "x\u{600}.zip".hasSuffix(".zip") is false.
        ("x\u{600}.zip", ".zip", "x\u{600}"),
        (".zip", ".zip", ""),
    ]

    @Test("an ASCII extension is matched by bytes and ASCII case, and cut off", arguments: cuts)
    func cut(name: String, suffix: String, base: String) {
        #expect(name.droppingASCIISuffix(suffix).map(String.init)?.sameBytes(as: base) == true)
    }

    static let kept: [(name: String, suffix: String)] = [
        ("zip", ".zip"),
        ("a.gz\u{301}", ".gz"),
        ("a.gzip", ".gz"),
        // The Kelvin sign lowercases to "k" as a Character, but it is not the byte "K".
        ("a.\u{212A}z", ".kz"),
    ]

    @Test("a name that does not end with the extension's bytes keeps it", arguments: kept)
    func keeps(name: String, suffix: String) {
        #expect(name.droppingASCIISuffix(suffix) == nil)
    }
}

/// Searches of text by its bytes, the way URLs and paths are cut.
@Suite("searching text by its bytes")
struct ByteSearchTests {
    @Test("containsBytes finds a byte sequence wherever it starts, even inside a Character")
    func containsBytes() {
        #expect("https://h/x".containsBytes(of: "://"))
        #expect("a:/:///".containsBytes(of: "://"), "a false start before the match")
        #expect(!"https:/h".containsBytes(of: "://"))
        #expect(!"".containsBytes(of: "a"))
        #expect("abc".containsBytes(of: ""))
        // As Characters, "/\u{301}" is one Character that is not "/": the bytes hold "://" all the same.
        #expect("h:/\u{301}/".containsBytes(of: ":/") && "x://\u{301}".containsBytes(of: "://"))
        #expect("é".containsBytes(of: "e\u{301}") == false, "bytes, not canonical equivalence")
        #expect("ab"[...].containsBytes(of: "b"[...]))
    }
}
