import Foundation
import HaulTestSupport
import Testing

/// `haul get` as curl, wget and aria2c users type it: several URLs, `-i FILE`, `--json`,
/// `--user-agent`, `--proxy` and the `*_proxy` variables.
@Suite("get options")
struct GetOptionsTests {
    static func json(_ text: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
    }

    @Test("several URLs and -i FILE download into -o DIR/ with the origins' names; --json reports each; --user-agent reaches the origin")
    func severalURLs() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("many")
        let a = try Origin.file("cli/many-a.bin", size: 150_000)
        let b = try Origin.file("cli/many-b.bin", size: 250_000)
        let c = try Origin.file("cli/many-c.bin", size: 50_000)
        let agent = "haul-test-agent/\(UUID().uuidString.prefix(8))"
        try "# from a list\n\(Harness.origin + b.path)\n\n\(Harness.origin + c.path)\n".write(
            toFile: directory + "/urls.txt", atomically: true, encoding: .utf8)
        let result = try Run.haul(
            ["get", Harness.origin + a.path, "-i", "urls.txt", "-o", "out/", "--json", "--user-agent", agent], database: database.url, directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let transfers = try Self.json(result.stdout)["transfers"] as? [[String: Any]] ?? []
        #expect(transfers.count == 3 && transfers.allSatisfy { $0["state"] as? String == "done" }, "\(result.stdout)")
        #expect(
            Set(transfers.compactMap { ($0["path"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent } }) == [
                "many-a.bin", "many-b.bin", "many-c.bin",
            ])
        for file in [a, b, c] {
            #expect(Origin.sha256(file: directory + "/out/" + URL(fileURLWithPath: file.path).lastPathComponent) == file.sha256)
            #expect(Origin.requests(for: file.path).contains { $0.contains(agent) }, "the User-Agent reached the origin for \(file.path)")
        }
        let single = try Run.haul(["get", Harness.origin + a.path, "-o", "one.bin", "--json", "-q"], database: database.url, directory: directory)
        let object = try Self.json(single.stdout)
        #expect(
            object["state"] as? String == "done" && object["size"] as? Int == 150_000 && (object["path"] as? String)?.hasSuffix("/one.bin") == true,
            "\(single.stdout)")
    }

    @Test(
        "-i with 2300 URLs, more than one read of statuses: each reported once and in order, by --json and by a line, and a 404 past the first thousand gives 8"
    )
    func longList() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("long-list")
        let files = try (0..<2300).map { try Origin.file("cli/long-list/f-\($0)", size: 64 + $0 % 7) }
        var urls = files.map { Harness.origin + $0.path }
        urls[1500] = Harness.origin + "/cli/long-list/no-such-file"
        try urls.joined(separator: "\n").write(toFile: directory + "/urls.txt", atomically: true, encoding: .utf8)
        // Without -q: the progress (log lines, stderr not a terminal) reads the open transfers' statuses too.
        let result = try Run.haul(["get", "-i", "urls.txt", "-o", "out/", "--json"], database: database.url, directory: directory)
        #expect(result.status == 8, "\(result.stderr.suffix(500))")
        let transfers = try Self.json(result.stdout)["transfers"] as? [[String: Any]] ?? []
        #expect(transfers.compactMap { $0["url"] as? String } == urls, "\(result.stdout.prefix(300))")
        #expect(Set(transfers.compactMap { $0["id"] as? Int }).count == urls.count)
        #expect(transfers[1500]["state"] as? String == "failed" && transfers[1500]["code"] as? String == "origin-status", "\(transfers[1500])")
        #expect(transfers.enumerated().allSatisfy { $0.offset == 1500 || $0.element["state"] as? String == "done" })
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("saved ") }.count == urls.count - 1)
        #expect(lines.filter { $0.hasPrefix("haul: transfer \(transfers[1500]["id"] as? Int ?? 0) failed") }.count == 1, "\(result.stderr.suffix(500))")
        for index in [0, 999, 1000, 2299] {
            #expect(Origin.sha256(file: directory + "/out/f-\(index)") == files[index].sha256, "file \(index)")
        }
    }

    @Test("--limit-rate: a paced download arrives whole (the pacing itself is checked without a clock in RatePacerTests)")
    func limitRate() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("limit")
        let file = try Origin.file("cli/limited.bin", size: 3 << 20)
        let result = try Run.haul(
            ["get", Harness.origin + file.path, "-o", "l.bin", "-x", "2", "--limit-rate", "4M", "-q"], database: database.url, directory: directory)
        #expect(result.status == 0 && Origin.sha256(file: directory + "/l.bin") == file.sha256, "\(result.stderr)")
    }

    @Test("--limit-rate holds small files fetched together in one batch too: two 1 MiB files at 1M take two seconds, not a blink")
    func limitRateBatch() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("limit-batch")
        let files = try ["a", "b"].map { try Origin.file("cli/limited-batch/\($0).bin", size: 1 << 20) }
        let started = Date()
        let result = try Run.haul(
            ["get"] + files.map { Harness.origin + $0.path } + ["-o", directory + "/", "--limit-rate", "1M", "-q"], database: database.url)
        let took = Date().timeIntervalSince(started)
        #expect(result.status == 0, "\(result.stderr)")
        for file in files {
            #expect(Origin.sha256(file: directory + "/" + (file.path as NSString).lastPathComponent) == file.sha256)
        }
        // A floor, not a speed target: a loaded machine only makes it slower. 2 MiB at 1 MiB/s,
        // less the quarter second of credit a pacer may bank; unpaced, the batch took 0.1 s.
        #expect(took >= 1.5, "two 1 MiB files at --limit-rate 1M arrived in \(took) s")
    }

    @Test("bad lists are refused before anything is written")
    func badInput() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("manybad")
        let cases: [[String]] = [
            ["get", "http://127.0.0.1:9/a", "http://127.0.0.1:9/b", "-o", "file.bin"],
            ["get", "-i", "no-such-list.txt"],
            ["get", "http://127.0.0.1:9/a", "not a url"],
            ["get", "http://127.0.0.1:9/a", "-o", "x.iso.haul-partial"],
            ["get", "http://127.0.0.1:9/a", "-o", ""],
            ["enqueue", "http://127.0.0.1:9/a", "--dest", "d/x.iso.haul-parts/g0-s1-abcd"],
            ["enqueue", "http://127.0.0.1:9/a", "--dest", "d/evil\u{1b}[31mred"],
            ["get"],
            ["get", "http://127.0.0.1:9/a", "--proxy", "nonsense"],
            ["get", "http://127.0.0.1:9/a", "--user-agent", ""],
            ["get", "http://127.0.0.1:9/a", "--limit-rate", "fast"],
            ["worker", "--storage", "/tmp", "--limit-rate", "0"],
        ]
        for words in cases {
            let result = try Run.haul(words, database: database.url, directory: directory)
            #expect(result.status == 2 && result.stderr.hasPrefix("haul: ") && result.stderr.split(separator: "\n").count == 1, "\(words): \(result.stderr)")
        }
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0")
    }

    @Test("an -o folder that cannot be made or written is refused at once: exit 2, one line naming it, nothing enqueued")
    func unusableOutputFolder() throws {
        let database = try TestDatabase()
        let work = Harness.temporaryDirectory("outfolder")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try Data("a file, not a folder\n".utf8).write(to: URL(fileURLWithPath: work + "/afile"))
        let url = "http://127.0.0.1:9/x.bin"
        let cases: [(output: String, says: String)] = [
            (work + "/afile/sub/x.bin", "cannot create directory \(work)/afile: something that is not a directory is there"),
            (work + "/afile/", "cannot create directory \(work)/afile: something that is not a directory is there"),
            ("/proc/haul-no-such-folder/x.bin", "cannot create directory /proc/haul-no-such-folder: No such file or directory"),
        ]
        for (output, says) in cases {
            let result = try Run.haul(["get", url, "-o", output], database: database.url)
            #expect(
                result.status == 2 && result.stderr.hasPrefix("haul: \(says)") && result.stderr.split(separator: "\n").count == 1, "\(output): \(result.stderr)"
            )
            #expect(result.stderr.contains("give -o a path in a folder you can write"), "\(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: work) == ["afile"])
        // A folder this user may not write (root may write anywhere, so another user runs it).
        if getuid() == 0, getpwnam("nobody") != nil {
            let haul = try Harness.haulBinaryForOtherUsers()
            let locked = work + "/locked"
            try FileManager.default.createDirectory(atPath: locked, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o555])
            for (output, says) in [
                (locked + "/x.bin", "the output folder \(locked) is not writable: Permission denied"),
                (locked + "/sub/x.bin", "permission denied: cannot create directory \(locked)/sub: Permission denied"),
            ] {
                let result = try Run.program(
                    "/usr/sbin/runuser", ["-u", "nobody", "--", haul, "get", url, "-o", output],
                    environment: ["DATABASE_URL": database.url], directory: "/", timeout: 60)
                #expect(
                    result.status == 2 && result.stderr.hasPrefix("haul: \(says)") && result.stderr.split(separator: "\n").count == 1,
                    "\(output): \(result.stderr)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: locked).isEmpty)
        }
        #expect(try database.scalar("SELECT count(*) FROM transfers") == "0")
    }

    @Test("--proxy and http_proxy send requests through the proxy (nginx serves absolute-URI requests), and without one the name does not resolve")
    func proxy() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("proxy")
        let file = try Origin.file("cli/proxied.bin", size: 120_000)
        let port = URLComponents(string: Harness.origin)!.port!
        // A host name that cannot resolve: only a proxy can fetch it.
        let url = "http://haul-proxy-test.invalid:\(port)" + file.path
        let flag = try Run.haul(["get", url, "-o", "flag.bin", "--proxy", Harness.origin, "-q"], database: database.url, directory: directory)
        #expect(flag.status == 0 && Origin.sha256(file: directory + "/flag.bin") == file.sha256, "\(flag.stderr)")
        let variable = try Run.haul(
            ["get", url, "-o", "env.bin", "-q"], database: database.url, environment: ["http_proxy": Harness.origin], directory: directory)
        #expect(variable.status == 0 && Origin.sha256(file: directory + "/env.bin") == file.sha256, "\(variable.stderr)")
        let direct = try Run.haul(
            ["get", url, "-o", "direct.bin", "-q"], database: database.url, environment: ["http_proxy": "", "no_proxy": "*"], directory: directory)
        #expect(direct.status == 4 && direct.stderr.contains("resolve"), "\(direct.stderr)")
    }
}
