import HaulCore
import HaulMetalink
import Testing

/// `<metaurl mediatype="metalink">`: another Metalink's mirrors of the file, at the metaurl's priority.
@Suite("Metalink metaurls")
struct MetaURLTests {
    static func nested(_ urls: [String], name: String = "debian.iso", size: Int = 10, metaurl: String = "") -> [UInt8] {
        MetalinkTests.meta4("<size>\(size)</size>" + urls.map { "<url>\($0)</url>" }.joined() + metaurl, name: name)
    }

    static func outer(_ metaurls: String) -> [UInt8] {
        MetalinkTests.meta4(
            """
            <size>10</size>
            <url priority="2">http://a.example/debian.iso</url>
            \(metaurls)
            <metaurl mediatype="torrent" priority="1">http://t.example/debian.torrent</metaurl>
            """)
    }

    static func refusal(_ outer: [UInt8], _ documents: [String: [UInt8]]) -> String? {
        do {
            _ = try Metalink(parsing: outer).following { url in documents[url] ?? [] }
            return nil
        } catch let error as HaulError {
            #expect(error.code == .usage)
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("a metalink metaurl's mirrors join the file's at its priority; torrents and nested metaurls are not followed")
    func followed() throws {
        let document = Self.outer(
            """
            <metaurl mediatype="metalink" priority="1">http://m.example/debian.meta4</metaurl>
            <metaurl mediatype="metalink" priority="3" name="other.iso">http://n.example/all.meta4</metaurl>
            """)
        var fetched: [String] = []
        let documents = [
            "http://m.example/debian.meta4": Self.nested(
                ["http://b.example/debian.iso", "http://a.example/debian.iso"],
                metaurl: "<metaurl mediatype=\"metalink\">http://deeper.example/x.meta4</metaurl>"),
            "http://n.example/all.meta4": MetalinkTests.meta4("<size>10</size><url>http://c.example/other.iso</url>", name: "other.iso"),
        ]
        let parsed = try Metalink(parsing: document)
        #expect(parsed.files[0].metaurls.map(\.url) == ["http://m.example/debian.meta4", "http://n.example/all.meta4"])
        let file = try #require(
            try parsed.following { url in
                fetched.append(url)
                return documents[url] ?? []
            }.files.first)
        #expect(fetched == ["http://m.example/debian.meta4", "http://n.example/all.meta4"])
        #expect(file.mirrors.map(\.url) == ["http://b.example/debian.iso", "http://a.example/debian.iso", "http://c.example/other.iso"])
        #expect(file.metaurls.isEmpty)
    }

    @Test("a file with only a metaurl is read; a metaurl's Metalink without the file, of another size, or hostile is refused")
    func refused() throws {
        let only = MetalinkTests.meta4("<size>10</size><metaurl mediatype=\"metalink\">http://m.example/x.meta4</metaurl>")
        let file = try #require(try Metalink(parsing: only).following { _ in Self.nested(["http://b.example/debian.iso"]) }.files.first)
        #expect(file.mirrors.map(\.url) == ["http://b.example/debian.iso"])
        let metaurl = "<metaurl mediatype=\"metalink\">http://m.example/x.meta4</metaurl>"
        let cases: [([UInt8], String)] = [
            (
                Array(
                    "<metalink><file name=\"a.bin\"><url>http://b.example/a</url></file><file name=\"b.bin\"><url>http://b.example/b</url></file></metalink>"
                        .utf8), "lists no file 'debian.iso'"
            ),
            (Self.nested(["http://b.example/debian.iso"], size: 11), "gives the file 11 bytes, but this Metalink says 10"),
            (Array("<!DOCTYPE m [<!ENTITY a \"b\">]><metalink/>".utf8), "DOCTYPE"),
        ]
        for (nested, reason) in cases {
            let message = Self.refusal(Self.outer(metaurl), ["http://m.example/x.meta4": nested])
            #expect(message?.contains(reason) == true && message?.contains("http://m.example/x.meta4") == true, "\(message ?? "accepted")")
        }
        // A metaurl's Metalink with no mirror Haul fetches; too many metaurls.
        #expect(Self.refusal(only, ["http://m.example/x.meta4": Self.nested(["ftp://b.example/debian.iso"])]) != nil)
        let many = (0...Metalink.maxMetaurls).map { "<metaurl mediatype=\"metalink\">http://m.example/\($0).meta4</metaurl>" }.joined()
        #expect(Self.refusal(Self.outer(many), [:])?.contains("more than the \(Metalink.maxMetaurls) Haul follows") == true)
    }
}
