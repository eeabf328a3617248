import Foundation
import HaulTestSupport
import Testing

/// The embedded PostgreSQL belongs to the user that runs `haul`: another local user (`nobody`) can
/// neither connect to it nor slip it a folder of their own. Run as root, as CI does (the server then
/// runs as `postgres` and `haul` connects as root).
// Serialized: one test plants the socket folder older versions used in /tmp, which another watches.
@Suite("embedded PostgreSQL against another local user", .serialized, .enabled(if: getuid() == 0 && getpwnam("nobody") != nil))
struct EmbeddedServerSecurityTests {
    @Test("while a worker runs on the embedded server, nobody cannot connect, even through the socket folder they created first")
    func anotherUserCannotConnect() throws {
        let home = Harness.temporaryDirectory("home")
        let storage = Harness.temporaryDirectory("storage")
        // The folder older versions put the socket in, predictable from HAUL_HOME: nobody creates it first.
        let predictable = "/tmp/haul-pg-\(Self.shortHash(home + "/postgres"))"
        defer {
            try? FileManager.default.removeItem(atPath: predictable)
            try? FileManager.default.removeItem(atPath: storage)
        }
        _ = try Self.asNobody(["/bin/mkdir", "-m", "0777", predictable])
        let worker = try Child(Harness.haulBinary, ["worker", "--storage", storage], environment: ["HAUL_HOME": home])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 30)
        }
        let pidFile = home + "/postgres/postmaster.pid"
        let ready = Harness.waitUntil(timeout: 90) {
            ((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").contains("ready") && worker.isRunning
        }
        #expect(ready, "the worker did not start the embedded server: \(worker.stderr)")
        let announced = ((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        let socketFolders = Set([predictable, home + "/postgres"] + (announced.count > 4 ? [announced[4]] : []))
        for folder in socketFolders {
            let attempt = try Self.asNobody(["/usr/bin/psql", "-X", "-tA", "-h", folder, "-U", "haul", "-d", "postgres", "-c", "SELECT 'connected'"])
            #expect(attempt.status != 0 && !attempt.stdout.contains("connected"), "nobody connected through \(folder): \(attempt.stdout)")
        }
        // The folder nobody made is still theirs: haul never takes over a folder it did not create.
        var info = stat()
        #expect(lstat(predictable, &info) == 0 && info.st_uid == getpwnam("nobody")!.pointee.pw_uid)
        // The socket itself is the server user's alone.
        if announced.count > 4 {
            #expect(stat(announced[4] + "/.s.PGSQL.5432", &info) == 0 && info.st_mode & 0o077 == 0, "socket mode \(String(info.st_mode & 0o777, radix: 8))")
        }
        #expect(worker.isRunning, "haul itself still connects: \(worker.stderr)")
    }

    @Test("a HAUL_HOME or cluster folder that another user owns, or that others may write, is refused and left as it was")
    func foreignOrLooseFoldersAreRefused() throws {
        let nobody = getpwnam("nobody")!.pointee.pw_uid
        // HAUL_HOME made by nobody.
        let foreign = Harness.temporaryDirectory("home-foreign")
        chown(foreign, nobody, gid_t.max)
        // HAUL_HOME of root, but writable by everyone.
        let loose = Harness.temporaryDirectory("home-loose")
        chmod(loose, 0o777)
        // HAUL_HOME is fine, but nobody created the cluster folder in it first.
        let planted = Harness.temporaryDirectory("home-planted")
        mkdir(planted + "/postgres", 0o700)
        chown(planted + "/postgres", nobody, gid_t.max)
        for (home, reason) in [(foreign, "belongs to nobody"), (loose, "open to other users"), (planted, "belongs to nobody")] {
            let result = try Run.haul(["list"], database: nil, environment: ["HAUL_HOME": home], timeout: 120)
            #expect(result.status != 0, "haul used \(home): \(result.stdout)")
            #expect(result.stderr.hasPrefix("haul: refusing to start the embedded PostgreSQL") && result.stderr.contains(reason), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one clear line: \(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: home + "/postgres/PG_VERSION"), "no cluster was created in \(home)")
        }
        var info = stat()
        #expect(lstat(planted + "/postgres", &info) == 0 && info.st_uid == nobody, "the planted folder was not chowned")
        #expect(lstat(foreign, &info) == 0 && info.st_uid == nobody && info.st_mode & 0o777 == 0o755)
        #expect(lstat(loose, &info) == 0 && info.st_mode & 0o777 == 0o777, "modes are never changed")
    }

    @Test("a HAUL_HOME too long for a socket path gets a fresh private socket folder in /tmp, removed at the end")
    func longHomeUsesATemporarySocketFolder() throws {
        let base = Harness.temporaryDirectory("home-long")
        defer { try? FileManager.default.removeItem(atPath: base) }
        let home = base + "/" + String(repeating: "h", count: 100)
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("haul-pg-") })
        // No linger: the server (and its socket folder) goes when the command ends.
        let result = try Run.haul(["list", "--json"], database: nil, environment: ["HAUL_HOME": home, "HAUL_EMBEDDED_LINGER": "0"], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: home + "/postgres/PG_VERSION"))
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: "/tmp").filter { $0.hasPrefix("haul-pg-") })
        #expect(after.subtracting(before).isEmpty, "the socket folder is removed when the server stops")
    }

    @Test("as root, a HAUL_HOME the postgres user cannot pass through gets its cluster in /var/lib/haul, where it stays")
    func clusterStaysWhereItWasMade() throws {
        try #require(getuid() == 0, "the server runs as another user only when haul runs as root")
        let base = Harness.temporaryDirectory("home-closed")
        let home = base + "/home"
        let fallback = "/var/lib/haul/postgres-\(Self.shortHash(home))"
        defer {
            try? FileManager.default.removeItem(atPath: base)
            try? FileManager.default.removeItem(atPath: fallback)
            try? FileManager.default.removeItem(atPath: fallback + ".linger")
        }
        chmod(base, 0o700)  // root's alone: the postgres user cannot pass through
        let environment = ["HAUL_HOME": home, "HAUL_EMBEDDED_LINGER": "0"]
        let first = try Run.haul(["list", "--json"], database: nil, environment: environment, timeout: 120)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(FileManager.default.fileExists(atPath: fallback + "/PG_VERSION"), "the cluster was made in /var/lib/haul")
        // The folder opens up: the cluster (and the queue in it) stays where it was made.
        chmod(base, 0o755)
        let second = try Run.haul(["list", "--json"], database: nil, environment: environment, timeout: 120)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home + "/postgres/PG_VERSION"), "no second cluster under HAUL_HOME")
    }

    /// Runs a program as `nobody`.
    static func asNobody(_ words: [String]) throws -> Run.Result {
        try Run.program("/usr/sbin/runuser", ["-u", "nobody", "--"] + words, environment: [:], directory: "/", timeout: 60)
    }

    /// The FNV-1a hash of a HAUL_HOME: older versions named the socket folder with it, and a
    /// cluster made in /var/lib/haul is named with it.
    static func shortHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash & 0xffff_ffff, radix: 16)
    }
}
