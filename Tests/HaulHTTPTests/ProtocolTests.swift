import HaulCore
import HaulHTTP
import Testing

@Suite("Content-Range, probes and range checks")
struct ProtocolTests {
    static let forms: [(String, ContentRange)] = [
        ("bytes 0-99/1000", ContentRange(first: 0, last: 99, total: 1000)),
        ("bytes 5-5/6", ContentRange(first: 5, last: 5, total: 6)),
        ("bytes 0-99/*", ContentRange(first: 0, last: 99, total: nil)),
        ("bytes */0", ContentRange(first: nil, last: nil, total: 0)),
        ("Bytes  10-19/20 ", ContentRange(first: 10, last: 19, total: 20)),
        ("BYTES 0-0/1", ContentRange(first: 0, last: 0, total: 1)),
        ("\tbytes 3-4 / 9\r\n", ContentRange(first: 3, last: 4, total: 9)),
        ("bytes */ 7", ContentRange(first: nil, last: nil, total: 7)),
        ("bytes 0-9223372036854775806/9223372036854775807", ContentRange(first: 0, last: 9_223_372_036_854_775_806, total: Int64.max)),
    ]

    @Test("Content-Range forms", arguments: forms)
    func parses(text: String, expected: ContentRange) {
        #expect(ContentRange(text) == expected)
    }

    @Test(
        "malformed Content-Range is refused",
        arguments: [
            "", "bytes", "bytes 9-1/10", "bytes 0-10/10", "bytes a-b/c", "items 0-1/2", "bytes */*", "bytes 0-1", "bytes -1-2/3",
            "bytes 0 -1/2", "bytes 0-1/2/3", "bytes 0-1-2/3", "bytes\t0-1/2", "bytes\u{0}0-1/2", "bytes 0-1/+2", "bytes +0-1/2",
            "bytes 0-1/99999999999999999999", "bytes 0-99999999999999999999/*", "bytes 0-1/2x", "bytez 0-1/2", "bytes 0-١/2",
        ])
    func refuses(text: String) {
        #expect(ContentRange(text) == nil)
    }

    private func head(_ status: Int, _ headers: [String: String] = [:]) -> ResponseHead {
        ResponseHead(status: status, headers: headers)
    }

    @Test("the probe's answer decides the plan")
    func probe() throws {
        #expect(try ProbeOutcome.classify(head(206, ["content-range": "bytes 0-99/1000"]), requestedLast: 99, url: "u") == .ranged(size: 1000))
        #expect(try ProbeOutcome.classify(head(206, ["content-range": "bytes 0-9/10"]), requestedLast: 99, url: "u") == .ranged(size: 10))
        #expect(try ProbeOutcome.classify(head(200, ["content-length": "1234"]), requestedLast: 99, url: "u") == .whole(length: 1234))
        #expect(try ProbeOutcome.classify(head(200), requestedLast: 99, url: "u") == .whole(length: nil))
        #expect(try ProbeOutcome.classify(head(200, ["content-length": "0"]), requestedLast: 99, url: "u") == .empty)
        #expect(try ProbeOutcome.classify(head(416, ["content-range": "bytes */0"]), requestedLast: 99, url: "u") == .empty)
        // A bare 416 to a range from byte 0 can only mean an empty file (curl and aria2c agree).
        #expect(try ProbeOutcome.classify(head(416), requestedLast: 99, url: "u") == .empty)
        #expect(throws: HaulError.self) { try ProbeOutcome.classify(head(416, ["content-range": "bytes */5000"]), requestedLast: 99, url: "u") }
        #expect(try ProbeOutcome.classify(head(304), requestedLast: 99, url: "u") == .notModified)
        #expect(throws: HaulError.self) { try ProbeOutcome.classify(head(206, ["content-range": "bytes 1-99/1000"]), requestedLast: 99, url: "u") }
        #expect(throws: HaulError.self) { try ProbeOutcome.classify(head(206, ["content-range": "bytes 0-49/1000"]), requestedLast: 99, url: "u") }
        do {
            _ = try ProbeOutcome.classify(head(404), requestedLast: 99, url: "https://u:secret@h/x")
            Issue.record("404 must throw")
        } catch let error as HaulError {
            #expect(!error.isTransient && error.message.contains("404") && !error.message.contains("secret"))
        }
        do {
            _ = try ProbeOutcome.classify(ResponseHead(status: 503, headers: ["retry-after": "7"]), requestedLast: 99, url: "u")
        } catch let error as HaulError {
            #expect(error.isTransient && error.retryAfter == 7)
        }
    }

    @Test("a later range must be exactly what was asked, of the same version")
    func rangeCheck() throws {
        let pinned = PinnedVersion(size: 1000, etag: "\"a\"", lastModified: "Mon, 01 Jan 2024 00:00:00 GMT")
        let ok = head(206, ["content-range": "bytes 100-199/1000", "etag": "\"a\"", "last-modified": "Mon, 01 Jan 2024 00:00:00 GMT"])
        try RangeCheck.validate(ok, first: 100, last: 199, pinned: pinned, url: "u")
        let changed: [ResponseHead] = [
            head(200, ["etag": "\"b\""]),
            head(206, ["content-range": "bytes 100-199/2000"]),
            head(206, ["content-range": "bytes 100-199/1000", "etag": "\"b\""]),
            head(206, ["content-range": "bytes 100-199/1000", "etag": "\"a\"", "last-modified": "Tue, 02 Jan 2024 00:00:00 GMT"]),
            // A shifted range from another version is a change, not a faulty answer.
            head(206, ["content-range": "bytes 101-200/1000", "last-modified": "Tue, 02 Jan 2024 00:00:00 GMT"]),
            head(416),
        ]
        for bad in changed {
            do {
                try RangeCheck.validate(bad, first: 100, last: 199, pinned: pinned, url: "u")
                Issue.record("\(bad) must be refused")
            } catch let error as HaulError {
                #expect(error.code == .originChanged, "\(bad)")
            }
        }
        // Without an ETag the Last-Modified alone is pinned.
        let dated = PinnedVersion(size: 1000, etag: nil, lastModified: "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(throws: HaulError.self) {
            try RangeCheck.validate(
                head(206, ["content-range": "bytes 100-199/1000", "last-modified": "Tue, 02 Jan 2024 00:00:00 GMT"]), first: 100, last: 199, pinned: dated,
                url: "u")
        }
        // Same validators and total, other bytes: a faulty response to retry, not a new version.
        // So is a missing or malformed Content-Range: the last segment's range shifted past the
        // file's end (`bytes 904-1003/1000`) once failed the transfer as "origin changed".
        let faulty = [
            head(206, ["content-range": "bytes 101-200/1000", "etag": "\"a\""]), head(206, ["content-range": "bytes 100-198/1000"]),
            head(206, ["content-range": "bytes 904-1003/1000", "etag": "\"a\""]), head(206, ["content-range": "bytes banana", "etag": "\"a\""]),
            head(206),
        ]
        for shifted in faulty {
            do {
                try RangeCheck.validate(shifted, first: 100, last: 199, pinned: pinned, url: "u")
                Issue.record("\(shifted) must be refused")
            } catch let error as HaulError {
                #expect(error.code == .badContentRange && error.isTransient, "\(shifted): \(error)")
            }
        }
    }

    @Test("a status after a redirect names the URL that answered")
    func redirectedStatus() {
        let error = StatusPolicy.error(for: ResponseHead(status: 404, url: "http://cdn/x/file.bin"), url: "http://origin/file.bin")
        #expect(error.message.contains("http://cdn/x/file.bin") && !error.message.contains("origin/file.bin"), "\(error)")
        let transient = StatusPolicy.error(for: ResponseHead(status: 503), url: "u")
        #expect(!transient.description.contains("will be retried"), "whether it is retried is not the error's to say: \(transient)")
    }

    @Test("Content-Disposition names are reduced to one safe component")
    func disposition() {
        #expect(ContentDisposition.filename("attachment; filename=\"report final.bin\"") == "report final.bin")
        #expect(ContentDisposition.filename("attachment; filename=\"../../etc/passwd\"") == "passwd")
        #expect(ContentDisposition.filename("attachment; filename*=UTF-8''na%C3%AFve.txt; filename=\"naive.txt\"") == "naïve.txt")
        #expect(ContentDisposition.filename("attachment; filename=\"a\\\"b.txt\"") == "a\"b.txt")
        #expect(ContentDisposition.filename("attachment; filename=\"..\"") == nil)
        #expect(ContentDisposition.filename("attachment; filename=\".bashrc\"") == "bashrc")
        #expect(ContentDisposition.filename("attachment; filename=\"C:\\\\Windows\\\\evil.exe\"") == "evil.exe")
        #expect(ContentDisposition.filename("inline") == nil)
        #expect(ContentDisposition.sanitize("a\u{7}b\nc") == "abc")
        #expect(ContentDisposition.filename("attachment; filename*=UTF-8''invoice%E2%80%AEfdp.exe") == "invoicefdp.exe")
        #expect(ContentDisposition.sanitize("a\u{85}b\u{2066}c\u{9B}d") == "abcd")
        // "/" or "." then a combining mark is one Character that is neither; a file name is cut by scalars.
        #expect(ContentDisposition.sanitize("evil/\u{301}x") == "\u{301}x")
        #expect(ContentDisposition.sanitize("../\u{301}x") == "\u{301}x")
        #expect(ContentDisposition.sanitize(".\u{301}hidden") == "\u{301}hidden")
        #expect(ContentDisposition.filename("attachment; filename*=UTF-8''..%2F%CC%81passwd") == "\u{301}passwd")
    }

    @Test("a name over 200 bytes is cut before its extension, by whole characters")
    func longNames() {
        let long = String(repeating: "c", count: 300)
        #expect(ContentDisposition.sanitize(long + ".tar.gz") == String(repeating: "c", count: 193) + ".tar.gz")
        #expect(ContentDisposition.sanitize(long) == String(repeating: "c", count: 200))
        // é is two bytes: never half of one.
        let accented = ContentDisposition.sanitize(String(repeating: "é", count: 150) + ".iso")
        #expect(accented == String(repeating: "é", count: 98) + ".iso")
        // No extension in the last 16 bytes: a plain cut.
        let dotted = "v1." + String(repeating: "x", count: 250)
        #expect(ContentDisposition.sanitize(dotted) == String(dotted.prefix(200)))
        #expect(ContentDisposition.sanitize(String(repeating: "n", count: 200) + ".bin")?.utf8.count == 200)
        #expect(ContentDisposition.sanitize("short.bin") == "short.bin")
    }

    @Test("header lines build the final response's head")
    func headParsing() {
        var head = ResponseHead(status: 0)
        head.absorb(line: "HTTP/1.1 302 Found\r\n")
        head.absorb(line: "Location: /x\r\n")
        head.absorb(line: "HTTP/1.1 206 Partial Content\r\n")
        head.absorb(line: "Content-Range: bytes 0-9/10\r\n")
        head.absorb(line: "ETag: W/\"x\"\r\n")
        #expect(head.status == 206 && head.reason == "Partial Content")
        #expect(head["location"] == nil)
        #expect(head.contentRange == ContentRange(first: 0, last: 9, total: 10))
        #expect(!head.hasStrongETag)
        #expect(ResponseHead.isStrong(etag: "\"x\"") && !ResponseHead.isStrong(etag: "W/\u{301}\"x\""), "weak by its bytes, whatever follows")
    }

    @Test("a status reads alike over HTTP/1.1 and HTTP/2, which has no reason phrase; the origin's own phrase wins")
    func statusText() {
        var http2 = ResponseHead(status: 0)
        http2.absorb(line: "HTTP/2 404\r\n")
        #expect(http2.reason.isEmpty && http2.statusText == "404 Not Found")
        var http1 = ResponseHead(status: 0)
        http1.absorb(line: "HTTP/1.1 404 Nicht gefunden\r\n")
        #expect(http1.statusText == "404 Nicht gefunden")
        #expect(ResponseHead(status: 599).statusText == "599")
    }

    @Test("header names are matched in any case, values keep their case and inner spaces, odd lines are ignored")
    func headFields() {
        var head = ResponseHead(status: 0)
        for line in [
            "HTTP/1.1 200 OK\r\n", "CONTENT-Type:  Text/Plain; Charset=UTF-8 \r\n", "X-Empty:\r\n", "no colon here\r\n",
            "ETag: \"a b\"\r\n", "Content-Length:\t42\n", "X-Ünïcode: ok\r\n", "Content-Length: 43\r\n",
        ] {
            head.absorb(line: line)
        }
        #expect(head.status == 200 && head.reason == "OK")
        #expect(head["content-type"] == "Text/Plain; Charset=UTF-8")
        #expect(head["x-empty"] == "")
        #expect(head.etag == "\"a b\"")
        #expect(head.contentLength == 43, "a repeated field keeps its last value")
        #expect(head["x-ünïcode"] == "ok")
        #expect(head.headers.count == 5)
        head.absorb(line: "HTTP/2 404\r\n")
        #expect(head.status == 404 && head.reason == "" && head.headers.isEmpty, "a status line starts a new response")
    }
}

@Suite("rate pacing")
struct RatePacerTests {
    @Test("a pacer waits exactly long enough to keep the average at its limit, and never when behind it")
    func pacing() {
        var pacer = RatePacer(limit: 1000)
        #expect(pacer.wait(after: 500, now: 100) == 0.5, "500 bytes at once: wait until 0.5 s have passed")
        #expect(pacer.wait(after: 500, now: 100.5) == 0.5, "1000 bytes by 100.5 s: wait until 101 s")
        #expect(pacer.wait(after: 100, now: 105) == 0, "behind the limit: no wait")
        var slow = RatePacer(limit: 0)
        #expect(slow.limit == 1 && slow.wait(after: 2, now: 0) == 2)
    }

    @Test("connections sharing one pacer wait for each other's bytes, and a pacer idle for a minute banks only a quarter second")
    func sharingAndCredit() {
        var shared = RatePacer(limit: 1000)
        #expect(shared.wait(after: 500, now: 10) == 0.5, "the first connection's chunk")
        #expect(shared.wait(after: 500, now: 10) == 1.0, "the second's, at the same moment, waits for both")
        #expect(shared.wait(after: 1000, now: 71) == 0.75, "after an idle minute only \(RatePacer.burst) s of credit is left")
    }
}
