import HaulCore
import Testing

@testable import HaulQueue

@Suite("segment planning")
struct PlanningTests {
    @Test("segments cover every file exactly once, in order, none empty")
    func coverage() {
        var generator = SystemRandomNumberGenerator()
        let sizes: [Int64] =
            [0, 1, 2, 4095, 4096, 4097, 8 << 20, (8 << 20) + 1, 1 << 30] + (0..<2000).map { _ in Int64.random(in: 0...(1 << 34), using: &generator) }
        for size in sizes {
            let segmentSize = Int64.random(in: 1...(256 << 20), using: &generator)
            let first = Int64.random(in: 1...(64 << 20), using: &generator)
            let plan = SegmentPlan(size: size, firstSegment: first, segmentSize: segmentSize)
            var next: Int64 = 0
            for range in plan.ranges {
                #expect(range.offset == next && range.length > 0)
                next += range.length
            }
            #expect(next == size, "size \(size)")
            if size > 0 { #expect(plan.ranges.first?.length == min(first, size)) }
        }
    }

    @Test("an empty file has no segments; a small one has one")
    func small() {
        #expect(SegmentPlan(size: 0, segmentSize: 8).ranges.isEmpty)
        #expect(SegmentPlan(size: 5, segmentSize: 8).ranges == [SegmentPlan.Range(offset: 0, length: 5)])
        #expect(SegmentPlan(size: 17, segmentSize: 8).ranges.map(\.length) == [8, 8, 1])
    }

    @Test("automatic segment size: a sixteenth of the file, between 8 and 128 MiB")
    func automatic() {
        let mib: Int64 = 1 << 20
        #expect(SegmentPlan.automaticSegmentSize(fileSize: 10 * mib) == 8 * mib)
        #expect(SegmentPlan.automaticSegmentSize(fileSize: 1 << 30) == 64 * mib)
        #expect(SegmentPlan.automaticSegmentSize(fileSize: 100 << 30) == 128 * mib)
        #expect(SegmentPlan.automaticSegmentSize(fileSize: 300 * mib) % mib == 0)
    }
}

@Suite("manifests")
struct ManifestTests {
    let base = NewTransfer(url: "http://placeholder/", dest: nil, segmentSize: 1 << 20)

    @Test("plain lines, comments, default destinations and JSON lines")
    func good() {
        let text = """
            # a comment
            https://h.example/pool/a.deb   debs/a.deb

            https://h.example/pool/b%20c.deb    # DEST from the URL
            {"url": "https://h.example/x.tgz", "dest": "x.tgz", "priority": 4, "extract": true, "headers": {"X-Token": "t"}}
            """
        let (entries, rejects) = Manifest.parse(text, base: base)
        #expect(rejects.isEmpty)
        #expect(entries.map(\.dest) == ["debs/a.deb", "pool/b c.deb", "x.tgz"])
        #expect(entries[2].priority == 4 && entries[2].options.extract == true && entries[2].headers == [Header(name: "X-Token", value: "t")])
        #expect(entries.allSatisfy { $0.segmentSize == 1 << 20 })
    }

    @Test("every bad line is reported with its number")
    func bad() {
        let text = """
            ftp://h/a
            https://h/b ../../etc/passwd
            https://h/c c d
            {"url": 5}
            {"url": "https://h/d", "colour": "red"}
            https://h/
            {not json
            https://h/e e
            https://h/e e
            """
        let (entries, rejects) = Manifest.parse(text, base: base)
        #expect(rejects.map(\.line) == [1, 2, 3, 4, 5, 6, 7, 9])
        #expect(entries.map(\.dest) == ["e"])
        #expect(rejects[0].description.contains("ftp"))
    }

    @Test("a manifest saved with CRLF line endings (or tabs between the fields) reads as with LF")
    func crlf() {
        let text =
            "# mirror list\r\nhttps://h/a.bin\ta.bin\r\n\r\nhttps://h/dir/b.bin \t b.bin # note\r\n{\"url\": \"https://h/c.bin\"}\r\nhttps://h/ünï.bin\r\n"
        let (entries, rejects) = Manifest.parse(text, base: base)
        #expect(rejects.isEmpty, "\(rejects)")
        #expect(entries.map(\.url) == ["https://h/a.bin", "https://h/dir/b.bin", "https://h/c.bin", "https://h/ünï.bin"])
        #expect(entries.map(\.dest) == ["a.bin", "b.bin", "c.bin", "ünï.bin"])
        let numbered = Manifest.parseNumbered("https://h/x x\r\nhttps://h/y y z\r\n", base: base)
        #expect(numbered.rejects.map(\.line) == [2])
    }

    @Test("a long manifest, parsed on every core: the same entries, rejects and line numbers as line by line")
    func longManifest() {
        // 5000 lines, so several runs of lines are parsed at once; the repeats and the clashes
        // point across the runs' borders, which only the in-order pass can see.
        var lines = (0..<5000).map { "https://h/f\($0) d/f\($0)" }
        lines[10] = "# comment"
        lines[2600] = "https://h/f1 d/f1"  // the same entry as line 2
        lines[4999] = "https://h/other d/f3"  // line 4 already writes d/f3
        lines[3333] = "https://h/x ../x"
        let (entries, rejects) = Manifest.parseNumbered(lines.joined(separator: "\n"), base: base)
        #expect(rejects.map(\.line) == [2601, 3334, 5000])
        #expect(rejects[0].reason.contains("earlier line") && rejects[2].reason.contains("line 4 already writes"))
        let expected = (0..<5000).filter { ![10, 2600, 3333, 4999].contains($0) }
        #expect(entries.map(\.line) == expected.map { $0 + 1 })
        #expect(entries.map(\.transfer.dest) == expected.map { "d/f\($0)" })
    }

    @Test("a batch drops only the repeats its unique index would: entries the same in bytes, not merely canonically equivalent")
    func repeatsByBytes() {
        var composed = base, decomposed = base, again = base
        (composed.url, composed.dest) = ("https://h/caf\u{E9}", "caf\u{E9}")
        (decomposed.url, decomposed.dest) = ("https://h/cafe\u{301}", "cafe\u{301}")
        (again.url, again.dest) = (composed.url, composed.dest)
        let kept = Batches.firstOfEach([composed, decomposed, again])
        #expect(kept.map { Array($0.dest!.utf8) } == [Array(composed.dest!.utf8), Array(decomposed.dest!.utf8)])
    }

    @Test("a bulk insert refreshes the statistics when they never counted the table or it adds a tenth of their rows")
    func analyzesWhenItMatters() {
        #expect(!Batches.analyzes(inserted: 999, counted: -1), "a short list: never")
        #expect(Batches.analyzes(inserted: 1000, counted: -1), "never analyzed")
        #expect(Batches.analyzes(inserted: 1000, counted: 0), "analyzed empty: the plans of a new cluster")
        #expect(Batches.analyzes(inserted: 2000, counted: 20_000))
        #expect(!Batches.analyzes(inserted: 1999, counted: 20_000))
        #expect(!Batches.analyzes(inserted: 5000, counted: 1_000_000), "a fleet's history")
    }

    @Test("work cut into runs comes back whole and in order, however many items there are")
    func runsInOrder() {
        for count in [0, 1, 7, 1023, 1024, 2048, 2049, 10_000] {
            let joined = Manifest.inParallel(count, minimumRun: 1024) { range in Array(range) }
            #expect(joined == Array(0..<count), "\(count) items")
        }
    }
}
