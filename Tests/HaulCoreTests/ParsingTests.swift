import Foundation
import HaulCore
import Testing

@Suite("sizes, durations, checksums")
struct ParsingTests {
    static let sizeCases: [(String, Int64)] = [
        ("4096", 4096), ("512KiB", 512 * 1024), ("8MiB", 8 << 20), ("1GiB", 1 << 30), ("8M", 8 << 20),
        ("2kb", 2000), ("1 GiB", 1 << 30), (" 7 ", 7), ("3TiB", 3 << 40),
    ]

    @Test("sizes as operators write them", arguments: sizeCases)
    func sizes(text: String, bytes: Int64) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test("sizes that are refused", arguments: ["", "lots", "0", "-5", "1.5MiB", "MiB", "9999999999999TiB", "8 MiB extra", "0x10"])
    func badSizes(text: String) {
        #expect(ByteSize.parse(text) == nil)
        #expect(throws: HaulError.self) { try ByteSize.parse(text, flag: "--segment-size") }
    }

    static let durationCases: [(String, Double)] = [
        ("500ms", 0.5), ("30s", 30), ("5m", 300), ("2h", 7200), ("7d", 604_800), ("10", 10), ("1.5s", 1.5), ("1h30m", 5400), ("2d12h", 216_000), ("1m30s", 90),
        ("1s500ms", 1.5),
    ]

    @Test("durations", arguments: durationCases)
    func durations(text: String, seconds: Double) {
        #expect(Duration.parseSeconds(text) == seconds)
    }

    @Test("durations that are refused", arguments: ["", "soon", "0s", "-1s", "5 minutes", "s", "1h30", "h30m", "1x", "1h 30m", "0"])
    func badDurations(text: String) {
        #expect(Duration.parseSeconds(text) == nil)
    }

    @Test("zero is a duration only where a flag allows it (prune --older-than 0s)")
    func zeroDuration() {
        #expect(Duration.parseSeconds("0s", allowZero: true) == 0)
        #expect(Duration.parseSeconds("0", allowZero: true) == 0)
        #expect(Duration.parseSeconds("0h0m", allowZero: true) == 0)
        #expect(Duration.parseSeconds("-1s", allowZero: true) == nil)
    }

    @Test("checksums: known algorithms, right length, hex only")
    func checksums() throws {
        let hex = String(repeating: "ab", count: 32)
        #expect(try Checksum(parsing: "sha256:\(hex)").hex == hex)
        #expect(try Checksum(parsing: "SHA256:\(hex.uppercased())").description == "sha256:\(hex)")
        #expect(try Checksum(parsing: "md5:" + String(repeating: "0", count: 32)).algorithm == .md5)
        for bad in ["sha256:abc", "crc32:00000000", "sha256", "sha1:" + String(repeating: "g", count: 40), ":", "sha512:" + hex] {
            #expect(throws: HaulError.self, "\(bad)") { try Checksum(parsing: bad) }
        }
    }

    @Test("the digester agrees with known vectors")
    func digests() {
        let vectors: [(Checksum.Algorithm, String)] = [
            (.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (.sha1, "a9993e364706816aba3e25717850c26c9cd0d89d"),
            (.md5, "900150983cd24fb0d6963f7d28e17f72"),
        ]
        for (algorithm, expected) in vectors {
            let digester = Digester(algorithm)
            Array("abc".utf8).withUnsafeBytes { digester.update($0) }
            #expect(digester.finish().hex == expected)
        }
    }

    @Test("hex: two lower-case digits a byte, leading zeros kept, every byte value")
    func hex() {
        #expect(ASCIIBytes.hex([UInt8]()) == "")
        #expect(ASCIIBytes.hex([0x00, 0x0f, 0x10, 0xa5, 0xff]) == "000f10a5ff")
        let all = (0...255).map { UInt8($0) }
        #expect(ASCIIBytes.hex(all) == all.map { String(format: "%02x", $0) }.joined())
        #expect(ASCIIBytes.hex(all[250...]) == "fafbfcfdfeff", "a slice starts at its own first byte")
    }

    @Test("backoff doubles, is capped, spreads with jitter, and yields to a longer Retry-After")
    func backoff() {
        let policy = Backoff(base: 1, cap: 60)
        #expect(policy.delay(afterAttempt: 1, jitter: 1) == 1)
        #expect(policy.delay(afterAttempt: 4, jitter: 1) == 8)
        #expect(policy.delay(afterAttempt: 4, jitter: 0) == 4)
        #expect(policy.delay(afterAttempt: 40, jitter: 1) == 60)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 30, jitter: 0.5) == 30)
        #expect(policy.delay(afterAttempt: 3, retryAfter: 0.1, jitter: 1) == 4)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 99_999, jitter: 1) == 3600)
        for attempt in 1...20 {
            let delay = policy.delay(afterAttempt: attempt, jitter: Double(attempt % 7) / 7)
            #expect(delay > 0 && delay <= 60)
        }
    }
}

@Suite("paths, URLs and secrets")
struct SafetyTests {
    @Test(
        "destinations stay inside the storage root",
        arguments: [
            "/etc/passwd", "../x", "a/../../x", "a/..", "", "a\\b", "dir/", "a\u{0}b", "..", "../\u{301}x", "/\u{301}x", "a/\u{301}b/\u{301}../..",
            "d/\u{301}/",
        ])
    func refusedDestinations(path: String) {
        #expect(throws: HaulError.self) { try SafePath.validate(path) }
    }

    @Test(
        "a destination never takes the name of another download's partial file or part folder",
        arguments: [
            "x.haul-partial", "a/x.iso.haul-partial", "x.haul-partial.3", "x.haul-parts", "x.haul-parts/g0-s1-abcd", "a/b.haul-parts/c",
            "x.haul-partial/\u{301}y",
            // U+0600 is a "prepend" mark: it joins the '.' after it into one Character, so that
            // `hasSuffix(".haul-partial")` is false, while the name ends with those bytes.
            "x\u{600}.haul-partial", "x\u{600}.haul-parts", "x\u{600}.haul-partial.2", "a/x\u{600}.haul-partial",
        ])
    func reservedDestinations(path: String) throws {
        #expect(try SafePath.validate(path) == path, "a recorded path of Haul's own (a part file) is still valid")
        #expect {
            try SafePath.validateDestination(path)
        } throws: { error in
            (error as? HaulError)?.message.contains("a name Haul keeps for the files of downloads in progress") == true
        }
    }

    @Test(
        "a destination has no control or direction characters",
        arguments: ["a\u{1b}[31mb", "line\nbreak", "tab\there", "del\u{7f}", "c1\u{9b}x", "exe\u{202e}txt.exe"])
    func controlCharacters(path: String) {
        #expect {
            try SafePath.validateDestination(path)
        } throws: { error in
            let message = (error as? HaulError)?.message ?? ""
            return message.contains("contains the control or direction character U+") && !message.unicodeScalars.contains(where: SafeText.isUnsafe)
        }
    }

    @Test("names near the reserved ones are destinations like any other")
    func nearlyReserved() throws {
        for path in [
            "x.haul-partial.iso", "x.haul-partial.", "x.haul-partial.3a", "haul-partial", "x.haul-parts.txt", "a.haul-partialx/b",
            "x.haul-partial\u{301}", "x.haul-partial.\u{661}",
        ] {
            #expect(try SafePath.validateDestination(path) == path)
        }
    }

    @Test("paths are cut at every '/' byte, as the kernel cuts them, not at Characters")
    func cutAtSlashBytes() {
        // "/" then U+0301 (a combining mark) is one Character that is not "/".
        #expect("../\u{301}x".split(separator: "/").count == 1, "the Character split this replaces")
        #expect("../\u{301}x".slashComponents() == ["..", "\u{301}x"])
        #expect("a//b/".slashComponents() == ["a", "b"])
        #expect("a//b/".slashComponents(keepingEmpty: true) == ["a", "", "b", ""])
        #expect("/\u{301}x".startsWithSlash && !"/\u{301}x".hasPrefix("/"))
        #expect("x/\u{301}".endsWithSlash == false && "x/\u{301}/".endsWithSlash)
        #expect("a/\u{301}b".containsSlash && "a/\u{301}b".lastSlashComponent == "\u{301}b")
        let path = "a/\u{301}b"
        #expect(path.lastSlashIndex.map { String(path[..<$0]) } == "a")
        #expect("name".lastSlashIndex == nil && "".lastSlashComponent == nil)
        #expect("out//".trimmingTrailingSlashes == "out" && "/".trimmingTrailingSlashes == "/" && "//".trimmingTrailingSlashes == "/")
        #expect("x\u{600}/".trimmingTrailingSlashes == "x\u{600}" && String("x\u{600}/".dropLast()) == "x", "the Character trim this replaces")
    }

    @Test("destinations are normalised")
    func normalised() throws {
        #expect(try SafePath.validate("a//b/./c.iso") == "a/b/c.iso")
        #expect(try SafePath.validate("./x") == "x")
        #expect(try SafePath.validate("..hidden/file") == "..hidden/file")
    }

    @Test(
        "only http and https URLs with a host",
        arguments: ["not a url", "file:///etc/passwd", "ftp://h/x", "gopher://h/", "http:///x", "https://", "", "javascript:alert(1)"])
    func refusedURLs(url: String) {
        #expect(throws: HaulError.self) { try OriginURL.validate(url) }
    }

    @Test(
        "a URL with a space or a control character (C0, DEL, C1) says so and how to write it",
        arguments: ["https://h/a b.iso", "https://h/a\tb.iso", "https://h/a\u{7F}", "https://h/a\u{85}b", "https://h/a\u{9F}"])
    func blankInURL(url: String) {
        #expect {
            try OriginURL.validate(url)
        } throws: { error in
            let text = (error as? HaulError)?.description ?? ""
            return (text.contains("a space") || text.contains("a control character")) && text.contains("percent-encode it:")
        }
    }

    @Test("the scheme refusal says what haul does with the URL: fetch from it or upload to it")
    func schemeRefusalSaysWhy() {
        for (uploading, words) in [(false, "haul fetches only http and https URLs"), (true, "haul uploads only to http and https URLs")] {
            #expect {
                try OriginURL.validate("ftp://h/x", uploading: uploading)
            } throws: { ($0 as? HaulError)?.description.contains(words) == true }
        }
    }

    @Test("upload targets: http(s) and s3; another scheme is refused as an upload target, not as a URL to fetch")
    func uploadTargets() throws {
        #expect(try UploadTarget.validate("https://up.example/files") == "https://up.example/files")
        #expect(try UploadTarget.validate("s3://bucket/key/") == "s3://bucket/key/")
        #expect(throws: HaulError.self) { try UploadTarget.validate("s3://ab/key") }
        // The HTTP client would resolve the '..' away and write another bucket's key.
        #expect(throws: HaulError.self) { try UploadTarget.validate("s3://bucket/../other/key") }
        #expect(throws: HaulError.self) { try UploadTarget.validate("s3://bucket/a//b") }
        // A bucket name no S3 store allows is refused at enqueue, not when the upload runs; older
        // AWS and GCS names (upper case, underscores) are allowed.
        #expect(try UploadTarget.validate("s3://Upper_Case/key") == "s3://Upper_Case/key")
        #expect(throws: HaulError.self) { try UploadTarget.validate("s3://bad!name/key") }
        #expect(throws: HaulError.self) { try UploadTarget.validate("s3://-dash-first/key") }
        #expect(throws: HaulError.self) { try UploadTarget.validate("s3://a b c/key") }
        #expect(try UploadTarget.validate("s3://bucket") == "s3://bucket")
        #expect(try UploadTarget.validate("s3://bucket/release notes.txt") == "s3://bucket/release notes.txt", "a key may hold a space")
        #expect(throws: HaulError.self) { try UploadTarget.validate("s3://bucket/a\nb") }
        do {
            _ = try UploadTarget.validate("gs://user:secret@bucket/key")
            Issue.record("gs:// was accepted")
        } catch let error as HaulError {
            #expect(error.description.contains("uploads only to http(s) and s3 targets"), "\(error)")
            #expect(!error.description.contains("fetches"), "\(error)")
            #expect(!error.description.contains("secret"), "credentials are redacted: \(error)")
        }
    }

    @Test("URLs, last segments and host keys")
    func urls() throws {
        #expect(try OriginURL.validate("HTTPS://Example.com:8443/a%20b.iso?x=1") == "HTTPS://Example.com:8443/a%20b.iso?x=1")
        // The fragment never reaches the origin: dropped, so that URL and URL#part are one transfer.
        #expect(try OriginURL.validate("https://h/pkg.whl#sha256=ab12") == "https://h/pkg.whl")
        #expect(try OriginURL.validate("https://h/a?q=1#") == "https://h/a?q=1")
        #expect(try OriginURL.validate("https://h/a%23b.bin") == "https://h/a%23b.bin", "an encoded # is part of the path")
        #expect(OriginURL.lastPathSegment("https://h/dir/a%20b.iso?x=1") == "a b.iso")
        #expect(OriginURL.lastPathSegment("https://h/") == nil)
        // Decoded exactly once: never `pctA.bin`, never `b.bin`.
        #expect(OriginURL.lastPathSegment("https://h/d/pct%2541.bin") == "pct%41.bin")
        #expect(OriginURL.lastPathSegment("https://h/d/a%252Fb.bin") == "a%2Fb.bin")
        #expect(OriginURL.lastPathSegment("https://h/d/a%2Fb.bin") == "a/b.bin")
        #expect(OriginURL.hostKey("https://Example.com:8443/x") == "example.com:8443")
        #expect(OriginURL.hostKey("http://example.com/x") == "example.com")
        // A web default port spelled out is the same host limit.
        #expect(OriginURL.hostKey("HTTPS://example.com:443/x") == "example.com")
        #expect(OriginURL.hostKey("http://example.com:80/x") == "example.com")
        #expect(OriginURL.hostKey("http://example.com:443/x") == "example.com")
        #expect(OriginURL.hostKey("https://[2001:db8::1]:443/x") == OriginURL.hostKey("https://[2001:db8::1]/x"))
    }

    @Test("the host keys of many URLs are each URL's own, one parse per origin")
    func hostKeysOfMany() {
        let urls = [
            "https://Example.com:8443/a", "https://example.com:8443/b?x=1", "http://example.com/c", "http://example.com?q#f",
            "https://user:pw@mirror.example/d", "https://[2001:db8::1]:8080/e", "http://example.com#frag", "https://EXAMPLE.com/f", "https://example.com:443/h",
            "https://例え.jp/g",
        ]
        #expect(OriginURL.hostKeys(urls) == urls.map(OriginURL.hostKey))
        #expect(OriginURL.hostKeys(urls + urls) == (urls + urls).map(OriginURL.hostKey), "repeated origins come from the memo")
    }

    @Test("secrets are redacted from URLs and header lines")
    func redaction() {
        #expect(Redaction.url("https://user:pw@h.example/x") == "https://***@h.example/x")
        #expect(Redaction.url("https://h/x?token=abc&b=2") == "https://h/x?token=***&b=2")
        #expect(Redaction.url("https://h/x?X-Amz-Signature=abc") == "https://h/x?X-Amz-Signature=***")
        #expect(Redaction.url("https://h/p@th") == "https://h/p@th")
        // A delimiter followed by a combining mark is one Character, but a server still splits there.
        #expect(Redaction.url("https://user:pw@\u{301}h.example/x") == "https://***@\u{301}h.example/x")
        #expect(Redaction.url("https://h/x?token=\u{301}abc&b=2") == "https://h/x?token=***&b=2")
        #expect(Redaction.url("https://h/x?a=1&\u{301}b=2&sig=s") == "https://h/x?a=1&\u{301}b=2&sig=***")
        #expect(Redaction.headerLine("Authorization: Bearer s3cret") == "Authorization: ***")
        #expect(Redaction.headerLine("cookie: a=b") == "cookie: ***")
        #expect(Redaction.headerLine("Accept: */*") == "Accept: */*")
    }
}

@Suite("log lines")
struct LogTests {
    @Test(
        "timestamps are ISO 8601 in UTC with milliseconds, as Foundation's formatter writes them",
        arguments: [0, 1.5, 951_782_400.999, 1_798_337_570.278, 4_102_444_799.0005, 1_700_000_000.0999])
    func timestamp(seconds: Double) {
        let reference = ISO8601DateFormatter.string(
            from: Date(timeIntervalSince1970: seconds), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        #expect(Log.timestamp(seconds) == reference)
    }
}

@Suite("trimming header text")
struct TrimmingTests {
    @Test(
        "spaces, tabs and line ends go from both ends; the middle and other characters stay",
        arguments: [
            ("  Content-Length: 12 \r\n", "Content-Length: 12"), ("\t\r\n", ""), ("", ""), ("x", "x"), (" a \t b ", "a \t b"),
            ("\r\n", ""), ("é ", "é"), (" \u{00A0}x\u{00A0} ", "\u{00A0}x\u{00A0}"),
        ])
    func trims(text: String, trimmed: String) {
        #expect(text.trimmingWhitespace() == trimmed)
        #expect(("<" + text + ">").dropFirst().dropLast().trimmingWhitespace() == trimmed, "a Substring trims the same")
    }
}

@Suite("errors from outside Haul")
struct ForeignErrorTests {
    @Test("a Foundation file error is the file and the system's reason on one line")
    func foundationFileError() throws {
        let path = "/nonexistent-\(UUID().uuidString)/x.bin"
        do {
            try Data([1]).write(to: URL(fileURLWithPath: path))
            Issue.record("the write succeeded")
        } catch {
            #expect(HaulError.describing(error) == "\(path): No such file or directory")
        }
        do {
            let full = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
            try full.write(contentsOf: Data(count: 1 << 16))
            Issue.record("/dev/full took the bytes")
        } catch {
            #expect(HaulError.describing(error) == "No space left on device")
        }
    }
}
