import Foundation
import HaulTestSupport
import Testing

/// `haul dashboard` as a process over a real database, driven with curl as an API client or a
/// browser would (the browser itself is Tests/dashboard/browser_test.py).
@Suite(.serialized) struct DashboardTests {
    /// A running dashboard of a cluster, and curl against it.
    final class Served: @unchecked Sendable {
        // Used by one test on one task at a time.
        let cluster: Cluster
        let port: Int
        let child: Child
        let jar = NSTemporaryDirectory() + "haul-dash-jar-\(UUID().uuidString.prefix(8))"
        var base: String { "http://127.0.0.1:\(port)" }

        init(_ label: String, token: String? = DashboardTests.token) throws {
            cluster = try Cluster(label)
            port = try Self.freePort()
            var environment = ["DATABASE_URL": cluster.database.url]
            if let token { environment["HAUL_DASHBOARD_TOKEN"] = token }
            child = try Child(Harness.haulBinary, ["dashboard", "--addr", "127.0.0.1:\(port)"], environment: environment)
            let up = try Harness.waitUntil(timeout: 20) { try self.curl(["-o", "/dev/null", "-w", "%{http_code}", "\(self.base)/login"]).stdout != "000" }
            guard up else { throw TestFailure("dashboard did not start: \(child.stderr)") }
        }

        deinit {
            child.signal(SIGTERM)
            _ = child.wait(timeout: 10)
            try? FileManager.default.removeItem(atPath: jar)
        }

        /// curl with this dashboard's cookie jar; returns its output.
        func curl(_ arguments: [String]) throws -> Run.Result {
            try Run.program("/usr/bin/curl", ["-s", "-b", jar, "-c", jar] + arguments, environment: [:], timeout: 60)
        }

        /// `(status, body)` of a request.
        func request(_ method: String, _ path: String, headers: [String] = [], form: String? = nil) throws -> (status: Int, body: String) {
            var arguments = ["-X", method, "-w", "\n%{http_code}"]
            for header in headers { arguments += ["-H", header] }
            if let form { arguments += ["--data-raw", form] }
            let output = try curl(arguments + [base + path]).stdout
            let lines = output.split(separator: "\n", omittingEmptySubsequences: false)
            return (Int(lines.last ?? "") ?? 0, lines.dropLast().joined(separator: "\n"))
        }

        /// Logs in as a browser does and returns the page's CSRF token.
        func logIn() throws -> String {
            let login = try request("POST", "/login", headers: ["Origin: \(base)"], form: "token=\(DashboardTests.token)")
            guard login.status == 303 else { throw TestFailure("login answered \(login.status)") }
            let page = try request("GET", "/transfers").body
            guard let range = page.range(of: #"name="csrf-token" content="([0-9a-f]+)""#, options: .regularExpression) else {
                throw TestFailure("no CSRF token in the page")
            }
            return String(page[range].split(separator: "\"")[3])
        }

        static func freePort() throws -> Int {
            let port = Reliability.freePort()
            guard port > 0 else { throw TestFailure("no free port") }
            return port
        }
    }

    /// The operator token of these tests (at least 16 characters, as `haul dashboard` demands).
    static let token = "op-token-for-tests-0123"

    /// A transfer no worker will touch (nothing listens on port 9), so it stays pending.
    static let idleURL = "http://127.0.0.1:9/idle.bin"

    @Test func actionsRefuseAndAnswerAsTheCLIDoes() throws {
        let served = try Served("dash-api")
        let id = try served.cluster.enqueue(Self.idleURL)
        let bearer = "Authorization: Bearer \(DashboardTests.token)"
        let pause = try served.request("POST", "/api/transfers/\(id)/pause", headers: [bearer])
        #expect(pause.status == 200)
        #expect(pause.body.contains("transfer \(id): pause done"))
        #expect(try served.cluster.state(id) == "paused")
        let retry = try served.request("POST", "/api/transfers/\(id)/retry", headers: [bearer])
        let cli = try served.cluster.haul(["retry", String(id)])
        #expect(retry.status == 409)
        #expect(cli.status != 0)
        let message = cli.stderr.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "haul: ", with: "")
        let answer = try JSONSerialization.jsonObject(with: Data(retry.body.utf8)) as? [String: Any]
        #expect(answer?["error"] as? String == message)
        #expect(answer?["code"] as? String == "invalid-transition")
        #expect(try served.cluster.state(id) == "paused")
        #expect(try served.request("POST", "/api/transfers/\(id)/resume", headers: [bearer]).status == 200)
        #expect(try served.cluster.state(id) == "pending")
        #expect(try served.request("POST", "/api/transfers/999999/cancel", headers: [bearer]).status == 404)

        let manifest = NSTemporaryDirectory() + "dash-manifest-\(id).txt"
        try (1...3).map { "\(Self.idleURL)?n=\($0) part\($0).bin" }.joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: manifest) }
        #expect(try served.cluster.haul(["enqueue", "--manifest", manifest, "--batch", "nightly"]).status == 0)
        let batch = try served.request("POST", "/api/batches/nightly/cancel", headers: [bearer])
        #expect(batch.status == 200)
        #expect(batch.body.contains("cancel done for 3 transfers"))
        #expect(try served.cluster.database.scalar("SELECT count(*) FROM transfers WHERE state = 'canceled'") == "3")
        #expect(try served.request("POST", "/api/batches/nightly/cancel", headers: [bearer]).status == 409)
        let batches = try served.request("GET", "/api/batches", headers: [bearer]).body
        #expect(batches.contains(#""name":"nightly""#) && batches.contains(#""canceled":3"#))

        let limit = try served.request("POST", "/api/hosts/127.0.0.1%3A9/limit", headers: [bearer], form: "limit=2")
        #expect(limit.status == 200)
        #expect(try served.cluster.database.scalar("SELECT max_running FROM origin_hosts WHERE host = '127.0.0.1:9'") == "2")
        #expect(try served.request("POST", "/api/hosts/127.0.0.1%3A9/limit", headers: [bearer], form: "limit=-1").status == 400)
        #expect(try served.request("POST", "/api/hosts/127.0.0.1%3A9/pause", headers: [bearer]).status == 200)
        #expect(try served.cluster.database.scalar("SELECT max_running FROM origin_hosts WHERE host = '127.0.0.1:9'") == "0", "paused")
        #expect(try served.request("POST", "/api/hosts/127.0.0.1%3A9/resume", headers: [bearer]).body.contains("at most 2"))
        #expect(try served.cluster.database.scalar("SELECT max_running FROM origin_hosts WHERE host = '127.0.0.1:9'") == "2", "its limit is back")
        #expect(try served.request("POST", "/api/bulk/pause", headers: [bearer], form: "ids=").status == 400)
        #expect(try served.request("POST", "/api/hosts/127.0.0.1%3A9/limit", headers: [bearer], form: "limit=99999999999").status == 400)
        #expect(try served.request("POST", "/api/hosts/a%20b/limit", headers: [bearer], form: "limit=3").status == 400)
        let history = try served.request("GET", "/api/transfers/\(id)", headers: [bearer]).body
        #expect(history.contains(#""from":"pending","to":"paused""#))
        #expect(history.contains(#""from":"paused","to":"pending""#))
    }

    @Test func forgedAndUnauthenticatedPostsChangeNothing() throws {
        let served = try Served("dash-csrf")
        let id = try served.cluster.enqueue(Self.idleURL)
        let csrf = try served.logIn()
        let crossSite = try served.request(
            "POST", "/api/transfers/\(id)/cancel", headers: ["Origin: http://127.0.0.1:1", "X-CSRF-Token: \(csrf)"])
        #expect(crossSite.status == 403)
        let noToken = try served.request("POST", "/api/transfers/\(id)/cancel", headers: ["Origin: \(served.base)"], form: "csrf=forged")
        #expect(noToken.status == 403)
        let wrongBearer = try served.request("POST", "/api/transfers/\(id)/cancel", headers: ["Authorization: Bearer guess"])
        #expect(wrongBearer.status == 401)
        #expect(try served.cluster.state(id) == "pending")
        let genuine = try served.request("POST", "/api/transfers/\(id)/cancel", headers: ["Origin: \(served.base)", "X-CSRF-Token: \(csrf)"])
        #expect(genuine.status == 200)
        #expect(try served.cluster.state(id) == "canceled")
    }

    @Test func aLoggedOutCookieIsRefusedAndGuessesAreSlowedPerAddress() throws {
        let served = try Served("dash-logout")
        let csrf = try served.logIn()
        let jar = try String(contentsOfFile: served.jar, encoding: .utf8)
        guard let line = jar.split(separator: "\n").first(where: { $0.contains("haul_session") }), let value = line.split(separator: "\t").last else {
            throw TestFailure("no session cookie in the jar: \(jar)")
        }
        let oldCookie = "Cookie: haul_session=\(value)"
        #expect(try served.request("GET", "/api/overview", headers: [oldCookie]).status == 200)
        let logout = try served.request("POST", "/logout", headers: ["Origin: \(served.base)"], form: "csrf=\(csrf)&return=/")
        #expect(logout.status == 303)
        // A copy of the cookie taken before logging out is refused: the session ended on the server.
        #expect(try served.request("GET", "/api/overview", headers: [oldCookie]).status == 401)
        #expect(try served.request("GET", "/transfers", headers: [oldCookie]).status == 303)

        // Wrong tokens from 127.0.0.1, one after another: after five, each is held until 0.1 s
        // after the last (RouterTests proves the 10 s for 200), and examined: all are wrong.
        var statuses: [Int] = []
        for guess in 0..<12 {
            statuses.append(try served.request("POST", "/login", headers: ["Origin: \(served.base)"], form: "token=guess\(guess)").status)
        }
        #expect(statuses.allSatisfy { $0 == 401 }, "\(statuses)")
        // The right token still works from the guessing address, and from another one.
        #expect(try served.request("GET", "/api/overview", headers: ["Authorization: Bearer \(Self.token)"]).status == 200)
        let other = try Run.program(
            "/usr/bin/curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "127.0.0.2", "-H", "Authorization: Bearer \(Self.token)",
                served.base + "/api/overview",
            ],
            timeout: 30)
        #expect(other.stdout == "200")
    }

    @Test func hostileTextsAreEscapedAndSecretsRedacted() throws {
        let served = try Served("dash-escape")
        let id = try served.cluster.enqueue("http://user:pw@127.0.0.1:9/a.bin?token=hunter2&x=1")
        _ = try Run.psql(
            served.cluster.database.url,
            "UPDATE transfers SET state = 'failed', error = '<script>alert(1)</script><img src=x onerror=alert(2)>', error_code = 'http-status' WHERE id = \(id)"
        )
        _ = try served.logIn()
        for path in ["/transfers", "/transfers/\(id)", "/"] {
            let page = try served.request("GET", path).body
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"), "\(path)")
            #expect(!page.contains("<script>alert"), "\(path)")
            #expect(!page.contains("<img"), "\(path)")
            #expect(!page.contains("hunter2") && !page.contains("pw@"), "\(path)")
        }
        let json = try served.request("GET", "/api/transfers/\(id)").body
        #expect(!json.contains("hunter2"))
    }

    /// A re-mirror the origin answered `304` for fetched nothing, yet its file is whole: a full
    /// bar marked unchanged, not an empty one (the 304 itself: `FleetTests.incrementalRemirror`).
    @Test func anUnchangedFileShowsWhole() throws {
        let served = try Served("dash-unchanged")
        let id = try served.cluster.enqueue(Self.idleURL)
        _ = try Run.psql(served.cluster.database.url, "UPDATE transfers SET state = 'done', unchanged = true, size = 400000 WHERE id = \(id)")
        _ = try served.logIn()
        for path in ["/transfers", "/transfers/\(id)"] {
            let page = try served.request("GET", path).body
            #expect(page.contains(#"<progress max="400000" value="400000"></progress>"#), "\(path)")
            #expect(page.contains("390.6 KiB</span> / <span data-field=\"size\">390.6 KiB</span></span> <small>unchanged</small>"), "\(path)")
        }
        let json = try JSONSerialization.jsonObject(with: Data(try served.request("GET", "/api/transfers/\(id)").body.utf8)) as? [String: Any]
        #expect(json?["unchanged"] as? Bool == true)
        #expect(json?["shown_bytes"] as? Int == 400_000)
        #expect(json?["bytes_done"] as? Int == 0)
    }

    @Test func tenThousandTransfersArePagedOnTheServer() throws {
        let served = try Served("dash-paging")
        let manifest = NSTemporaryDirectory() + "dash-10k-\(served.port).txt"
        try (1...10_000).map { "\(Self.idleURL)?n=\($0) f/\($0).bin" }.joined(separator: "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: manifest) }
        let enqueue = try served.cluster.haul(["enqueue", "--manifest", manifest, "--batch", "big"])
        #expect(enqueue.status == 0, "\(enqueue.stderr)")
        _ = try served.logIn()
        let timed = try served.curl(["-o", "/dev/null", "-w", "%{time_starttransfer} %{size_download}", served.base + "/transfers"]).stdout
        print("dashboard: first byte and size of /transfers with 10 000 transfers: \(timed) (seconds, bytes)")
        let page = try served.request("GET", "/transfers").body
        #expect(page.components(separatedBy: "<tr data-transfer-id=").count - 1 == 50)
        #expect(page.contains("<span data-total>10000</span>"))
        let second = try served.request("GET", "/transfers?batch=big&page=2&per=100").body
        #expect(second.components(separatedBy: "<tr data-transfer-id=").count - 1 == 100)
        #expect(second.contains("data-transfer-id=\"9900\""))
        let api = try served.request("GET", "/api/transfers?q=n%3D77&per=200").body
        let object = try JSONSerialization.jsonObject(with: Data(api.utf8)) as? [String: Any]
        #expect((object?["transfers"] as? [Any])?.count == 111)  // n=77, 770–779, 7700–7799
        #expect(object?["total"] as? Int == 111)
    }

    @Test func theChartAddsUpWhatWorkersReceived() throws {
        let served = try Served("dash-chart")
        let file = try Origin.file("dash-chart-\(served.port).bin", size: 6 << 20)
        let id = try served.cluster.enqueue(Harness.origin + file.path, ["--dest", "chart.bin"])
        try served.cluster.startWorker(["--lease", "3s"])
        #expect(try served.cluster.waitFinal([id]) == ["done"])
        // The heartbeat after the last byte records it (one per second with a 3 s lease).
        let recorded = try Harness.waitUntil(timeout: 20) {
            try served.cluster.database.scalar("SELECT coalesce(sum(bytes), 0) FROM worker_throughput") == String(6 << 20)
        }
        #expect(recorded)
        #expect(try served.cluster.database.scalar("SELECT sum(bytes_fetched) FROM workers") == String(6 << 20))
        let overview = try served.request("GET", "/api/overview", headers: ["Authorization: Bearer \(DashboardTests.token)"]).body
        let object = try JSONSerialization.jsonObject(with: Data(overview.utf8)) as? [String: Any]
        let minutes = object?["throughput"] as? [[String: Any]] ?? []
        #expect(minutes.count == 60)
        #expect(minutes.compactMap { ($0["bytes"] as? NSNumber)?.int64Value }.reduce(0, +) == 6 << 20)
        #expect((object?["states"] as? [String: Int])?["done"] == 1)
        #expect(object?["workers_alive"] as? Int == 1)
        let history = try served.cluster.database.scalar("SELECT string_agg(to_state, ',' ORDER BY id) FROM transfer_events WHERE transfer_id = \(id)")
        #expect(history.hasSuffix("finalizing,done"), "\(history)")
        #expect(history.hasPrefix("planning"), "\(history)")
    }

    @Test func guessableTokensAndTokenFilesOthersCanWriteAreRefused() throws {
        let folder = NSTemporaryDirectory() + "haul-token-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func tokenFile(_ name: String, _ text: String, mode: Int, in dir: String? = nil, owner: UInt32? = nil) throws -> String {
            let path = (dir ?? folder) + "/" + name
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, mode_t(mode))
            if let owner { chown(path, owner, gid_t(owner)) }
            return path
        }
        func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Run.Result {
            try Run.program(Harness.haulBinary, ["dashboard"] + arguments, environment: environment, timeout: 30)
        }
        let strong = String(repeating: "k7", count: 12)
        let port = "127.0.0.1:\(try Served.freePort())"
        let open = "0.0.0.0:\(try Served.freePort())"
        var cases: [(what: String, result: Run.Result, says: String)] = []
        cases.append(("short env token", try start(["--addr", port], environment: ["HAUL_DASHBOARD_TOKEN": "x"]), "fewer than 16"))
        cases.append(("15 characters", try start(["--addr", open], environment: ["HAUL_DASHBOARD_TOKEN": "abcdefghijklmno"]), "fewer than 16"))
        let short = try tokenFile("short", "tiny-token\n", mode: 0o600)
        cases.append(("short token file", try start(["--addr", port, "--token-file", short]), "fewer than 16"))
        let worldWritable = try tokenFile("world", strong, mode: 0o666)
        cases.append(("world-writable file", try start(["--addr", open, "--token-file", worldWritable]), "can be written by other users"))
        let groupWritable = try tokenFile("group", strong, mode: 0o620)
        cases.append(("group-writable file", try start(["--addr", port, "--token-file", groupWritable]), "can be written by other users"))
        let nobodys = try tokenFile("nobody", strong, mode: 0o600, owner: 65534)
        cases.append(("file of user nobody", try start(["--addr", port, "--token-file", nobodys]), "belongs to user 65534"))
        let shared = folder + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false)
        chmod(shared, 0o777)
        let inShared = try tokenFile("token", strong, mode: 0o600, in: shared)
        cases.append(("file in a folder all can write", try start(["--addr", port, "--token-file", inShared]), "other users can write"))
        // A sticky folder (like /tmp) is fine: others cannot replace the file; its too-short token is what is refused.
        let sticky = folder + "/sticky"
        try FileManager.default.createDirectory(atPath: sticky, withIntermediateDirectories: false)
        chmod(sticky, 0o1777)
        let inSticky = try tokenFile("token", "short-one", mode: 0o600, in: sticky)
        cases.append(("short token in a sticky folder", try start(["--addr", port, "--token-file", inSticky]), "fewer than 16"))
        for (what, result, says) in cases {
            #expect(result.status == 2, "\(what): \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("haul: ") && lines[0].contains(says), "\(what): \(result.stderr)")
            #expect(!result.stderr.contains(strong), "\(what): the token is never printed")
        }
    }

    @Test func withoutATokenItIsReadOnlyAndStaysOnLoopback() throws {
        let served = try Served("dash-readonly", token: nil)
        let id = try served.cluster.enqueue(Self.idleURL)
        #expect(try served.request("GET", "/transfers").status == 200)
        let post = try served.request("POST", "/api/transfers/\(id)/cancel", headers: ["Origin: \(served.base)"])
        #expect(post.status == 403)
        #expect(try served.cluster.state(id) == "pending")
        let rebound = try served.request("GET", "/", headers: ["Host: attacker.example"])
        #expect(rebound.status == 403)
        let everywhere = try served.cluster.haul(["dashboard", "--addr", "0.0.0.0:\(try Served.freePort())"])
        #expect(everywhere.status == 2)
        #expect(everywhere.stderr.hasPrefix("haul: a dashboard without a token serves only loopback"))
    }
}
