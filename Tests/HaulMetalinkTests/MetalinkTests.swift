import HaulCore
import HaulMetalink
import Testing

/// Reading Metalink documents, and refusing the hostile ones with a reason.
@Suite("Metalink")
struct MetalinkTests {
    static let sha256 = String(repeating: "ab", count: 32)
    static let sha1 = String(repeating: "cd", count: 20)

    static func meta4(_ file: String, name: String = "debian.iso") -> [UInt8] {
        Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink">
              <file name="\(name)">\(file)</file>
            </metalink>
            """.utf8)
    }

    static func refusal(_ bytes: [UInt8]) -> String? {
        do {
            _ = try Metalink(parsing: bytes)
            return nil
        } catch let error as HaulError {
            #expect(error.code == .usage)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("a Metalink 4 file: size, strongest digest, pieces and mirrors by priority")
    func metalink4() throws {
        let document = Self.meta4(
            """
            <size>10</size>
            <hash type="md5">\(String(repeating: "01", count: 16))</hash>
            <hash type="sha-256">\(Self.sha256.uppercased())</hash>
            <pieces length="4" type="sha-1"><hash>\(Self.sha1)</hash><hash>\(Self.sha1)</hash><hash>\(Self.sha1)</hash></pieces>
            <url location="de" priority="2">http://b.example/debian.iso</url>
            <url priority="1">https://a.example/debian.iso</url>
            <url>http://c.example/debian.iso</url>
            <url priority="1">ftp://a.example/debian.iso</url>
            <metaurl mediatype="torrent">http://a.example/debian.torrent</metaurl>
            """)
        let file = try #require(try Metalink(parsing: document).files.first)
        #expect(file.name == "debian.iso")
        #expect(file.size == 10)
        #expect(file.checksum == Checksum(algorithm: .sha256, hex: Self.sha256))
        #expect(file.pieces?.length == 4)
        #expect(file.pieces?.algorithm == .sha1)
        #expect(file.pieces?.hashes == [Self.sha1, Self.sha1, Self.sha1])
        #expect(file.mirrors.map(\.url) == ["https://a.example/debian.iso", "http://b.example/debian.iso", "http://c.example/debian.iso"])
        #expect(file.mirrors[1].location == "de")
    }

    @Test("a Metalink 3.0 file: verification, resources and preference")
    func metalink3() throws {
        let document = Array(
            """
            <?xml version="1.0"?>
            <metalink version="3.0" xmlns="http://www.metalinker.org/">
             <files>
              <file name="dir/a.bin">
               <size>5</size>
               <verification>
                <hash type="sha256">\(Self.sha256)</hash>
                <pieces length="5" type="sha1"><hash piece="0">\(Self.sha1)</hash></pieces>
               </verification>
               <resources>
                <url type="http" preference="10">http://slow.example/a.bin</url>
                <url type="bittorrent" preference="100">http://t.example/a.torrent</url>
                <url type="http" preference="90">http://fast.example/a.bin</url>
               </resources>
              </file>
             </files>
            </metalink>
            """.utf8)
        let file = try #require(try Metalink(parsing: document).files.first)
        #expect(file.name == "dir/a.bin")
        #expect(file.checksum?.algorithm == .sha256)
        #expect(file.pieces?.hashes.count == 1)
        #expect(file.mirrors.map(\.url) == ["http://fast.example/a.bin", "http://slow.example/a.bin"])
    }

    @Test("entities: the predefined and numeric ones decode; a DOCTYPE or any other is refused")
    func entities() throws {
        let file = try #require(
            try Metalink(parsing: Self.meta4("<url>http://a.example/x?a=1&amp;b=&#50;</url>", name: "a&amp;b")).files.first)
        #expect(file.name == "a&b")
        #expect(file.mirrors.first?.url == "http://a.example/x?a=1&b=2")

        let billion = Array(
            """
            <?xml version="1.0"?>
            <!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]>
            <metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="x"><url>http://a.example/&lol2;</url></file></metalink>
            """.utf8)
        #expect(Self.refusal(billion)?.contains("DOCTYPE") == true)
        #expect(Self.refusal(Self.meta4("<url>http://a.example/&xxe;</url>"))?.contains("&xxe;") == true)
    }

    @Test("names that leave the folder or drive a terminal are refused")
    func hostileNames() {
        #expect(Self.refusal(Self.meta4("<url>http://a.example/x</url>", name: "../../etc/passwd"))?.contains("..") == true)
        #expect(Self.refusal(Self.meta4("<url>http://a.example/x</url>", name: "/etc/passwd"))?.contains("absolute") == true)
        #expect(Self.refusal(Self.meta4("<url>http://a.example/x</url>", name: "a&#27;[2Jb"))?.contains("control") == true)
        #expect(Self.refusal(Self.meta4("<url>http://a.example/x</url>", name: "x.haul-partial"))?.isEmpty == false)
    }

    @Test("pieces must cover exactly the size; a huge count is refused before it is read")
    func hostilePieces() {
        let one = "<hash>\(Self.sha1)</hash>"
        // 10 bytes in 4-byte pieces are 3 pieces, not 2 or 4.
        #expect(
            Self.refusal(Self.meta4("<size>10</size><pieces length=\"4\" type=\"sha-1\">\(one)\(one)</pieces><url>http://a.example/x</url>"))?.contains(
                "make 3") == true)
        #expect(
            Self.refusal(Self.meta4("<size>10</size><pieces length=\"4\" type=\"sha-1\">\(one)\(one)\(one)\(one)</pieces><url>http://a.example/x</url>")) != nil
        )
        #expect(
            Self.refusal(Self.meta4("<size>1099511627776</size><pieces length=\"1\" type=\"sha-1\">\(one)</pieces><url>http://a.example/x</url>"))?
                .contains("more than") == true)
        #expect(Self.refusal(Self.meta4("<size>10</size><pieces length=\"0\" type=\"sha-1\">\(one)</pieces><url>http://a.example/x</url>")) != nil)
        #expect(Self.refusal(Self.meta4("<pieces length=\"4\" type=\"sha-1\">\(one)</pieces><url>http://a.example/x</url>"))?.contains("no <size>") == true)
        #expect(Self.refusal(Self.meta4("<size>-1</size><url>http://a.example/x</url>")) != nil)
        #expect(Self.refusal(Self.meta4("<size>4</size><pieces length=\"4\" type=\"sha-1\"><hash>zz</hash></pieces><url>http://a.example/x</url>")) != nil)
    }

    @Test("URLs Haul would not fetch are refused; ftp and rsync mirrors are left out")
    func hostileURLs() throws {
        #expect(Self.refusal(Self.meta4("<url>file:///etc/shadow</url>"))?.contains("file:") == true)
        #expect(Self.refusal(Self.meta4("<url>ftp://a.example/x</url>"))?.contains("no http or https URL") == true)
        let many = (0...Metalink.maxMirrors).map { "<url>http://m\($0).example/x</url>" }.joined()
        #expect(Self.refusal(Self.meta4(many))?.contains("mirrors") == true)
    }

    @Test("malformed, oversized or repeated documents are refused")
    func malformed() {
        #expect(Self.refusal(Array("<metalink><file name=\"x\"><url>http://a.example/x</url></metalink>".utf8)) != nil)
        #expect(Self.refusal(Array("<feed/>".utf8))?.contains("<feed>") == true)
        #expect(Self.refusal(Array("<metalink></metalink>".utf8))?.contains("no <file>") == true)
        #expect(Self.refusal([UInt8](repeating: 0x20, count: Metalink.maxBytes + 1))?.contains("bytes") == true)
        let deep = String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100)
        #expect(Self.refusal(Array("<metalink>\(deep)</metalink>".utf8))?.contains("deeper") == true)
        let twice = "<metalink><file name=\"x\"><url>http://a.example/x</url></file><file name=\"./x\"><url>http://b.example/x</url></file></metalink>"
        #expect(Self.refusal(Array(twice.utf8))?.contains("twice") == true)
    }
}
