import Foundation
import HaulTestSupport
import Testing

/// One segment row of a transfer's current generation, as the database has it.
struct SegmentRow: CustomStringConvertible {
    let index: Int
    let offset: Int64
    let length: Int64
    let bytesDone: Int64
    let state: String
    let attempts: Int
    let worker: String
    let lastError: String

    var lastByte: Int64 { offset + length - 1 }
    var isPartial: Bool { bytesDone > 0 && bytesDone < length }
    var description: String { "#\(index)@\(offset)+\(bytesDone)/\(length) \(state) a=\(attempts) w=\(worker) e=\(lastError)" }
}

extension TestDatabase {
    /// The current generation's segments of transfer `id`, in file order.
    func segments(_ id: Int64) throws -> [SegmentRow] {
        let result = try Run.psql(
            url,
            """
            SELECT s.idx, s.byte_offset, coalesce(s.length, -1), s.bytes_done, s.state, s.attempts, coalesce(s.worker_id, ''),
                   replace(coalesce(s.last_error, ''), E'\\n', ' ')
            FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.generation = s.generation
            WHERE t.id = \(id) ORDER BY s.idx
            """)
        guard result.status == 0 else { throw TestFailure("cannot read segments: \(result.stderr)") }
        return result.stdout.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "|", maxSplits: 7, omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 8 else { return nil }
            return SegmentRow(
                index: Int(fields[0]) ?? -1, offset: Int64(fields[1]) ?? -1, length: Int64(fields[2]) ?? -1, bytesDone: Int64(fields[3]) ?? -1,
                state: fields[4], attempts: Int(fields[5]) ?? -1, worker: fields[6], lastError: fields[7])
        }
    }

    /// Rows of a query as `|`-separated lines.
    func lines(_ sql: String) throws -> [String] {
        try Run.psql(url, sql).stdout.split(separator: "\n").map(String.init)
    }
}

extension Cluster {
    /// The transfer's `error` as `haul status --json` shows it ("" when none).
    func error(_ id: Int64) throws -> String {
        try status(id)["error"] as? String ?? ""
    }

    /// Waits until transfer `id` is in `state`.
    func waitState(_ id: Int64, _ wanted: String, timeout: Double = 60) throws -> Bool {
        try Harness.waitUntil(timeout: timeout) { try state(id) == wanted }
    }

    /// Files under the storage root that a finished or abandoned download left behind.
    func temporaries() -> [String] {
        let all = (FileManager.default.enumerator(atPath: storage)?.allObjects as? [String]) ?? []
        return all.filter { $0.contains(".haul-partial") || $0.contains(".haul-parts") || $0.contains(".haul-assembly") }
    }

    /// Current generation of transfer `id`.
    func generation(_ id: Int64) throws -> Int {
        Int(try database.scalar("SELECT generation FROM transfers WHERE id = \(id)")) ?? -1
    }
}

enum Reliability {
    static let mebibyte = 1 << 20

    /// A loopback TCP port nobody uses right now, in 20000–27999: above the suite's fixed ports
    /// (15432 to SeaweedFS's 18346) and below Linux's ephemeral range (32768–60999), so a server restarted on it
    /// mid-test (`PrivatePostgres.restart`) cannot find it taken by one of the suite's own
    /// client sockets, which the kernel numbers from that range. 0 if none was found.
    static func freePort() -> Int {
        for _ in 0..<500 {
            let port = Int.random(in: 20_000..<28_000)
            if canListen(on: port) { return port }
        }
        return 0
    }

    /// Whether a listening socket can be bound to 127.0.0.1:`port` now (as servers bind it,
    /// with `SO_REUSEADDR`, so that connections of an earlier server in `TIME_WAIT` do not count).
    private static func canListen(on port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// Runs a program and throws when it fails.
    @discardableResult
    static func must(_ path: String, _ arguments: [String], timeout: Double = 120) throws -> Run.Result {
        let result = try Run.program(path, arguments, environment: [:], timeout: timeout)
        guard result.status == 0 else {
            throw TestFailure("\(path) \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
        return result
    }

    /// Lines of a worker's log (stderr) that contain every one of `words`.
    static func logLines(_ child: Child, containing words: String...) -> [String] {
        child.stderr.split(separator: "\n").map(String.init).filter { line in words.allSatisfy { line.contains($0) } }
    }
}

/// A filesystem mounted for one test (tmpfs), unmounted when the test lets go of it.
final class Mount: @unchecked Sendable {
    // Used by one test on one task at a time.
    let path: String

    /// Mounts a tmpfs of `size` (e.g. `8m`) with extra `options` at `path`.
    init(tmpfsAt path: String, size: String, options: [String] = []) throws {
        self.path = path
        try Reliability.must("/usr/bin/mount", ["-t", "tmpfs", "-o", (["size=\(size)"] + options).joined(separator: ","), "tmpfs", path])
    }

    /// Changes mount options (`ro`, `rw`) in place.
    func remount(_ option: String) throws {
        try Reliability.must("/usr/bin/mount", ["-o", "remount,\(option)", path])
    }

    deinit {
        _ = try? Run.program("/usr/bin/umount", ["-l", path], environment: [:])
    }
}

/// A PostgreSQL cluster of one test's own (initdb as `postgres`, own port and socket folder),
/// so that restarting it cannot disturb tests running in parallel. Stopped and removed at the end.
final class PrivatePostgres: @unchecked Sendable {
    // Used by one test on one task at a time.
    let root: String
    let port: Int
    private let bin: String

    /// The server's maintenance database URL.
    var serverURL: String { "postgresql://postgres@127.0.0.1:\(port)/postgres" }

    init() throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else { throw TestFailure("no PostgreSQL server under /usr/lib/postgresql") }
        bin = "/usr/lib/postgresql/\(version)/bin"
        root = Harness.temporaryDirectory("pg")
        port = Reliability.freePort()
        try Reliability.must("/usr/bin/chown", ["postgres:", root])
        chmod(root, 0o700)
        try asPostgres(bin + "/initdb", ["-D", root + "/data", "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions", "--no-sync"])
        try start()
    }

    /// `pg_ctl start -w` on this cluster's port.
    func start() throws {
        try asPostgres(
            bin + "/pg_ctl",
            [
                "-D", root + "/data", "-l", root + "/server.log", "-w", "-t", "60", "-o",
                "-p \(port) -k \(root) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=100", "start",
            ])
    }

    /// `pg_ctl restart -m fast -w`: every connection is cut, the server comes back on the same port.
    func restart() throws {
        try asPostgres(bin + "/pg_ctl", ["-D", root + "/data", "-l", root + "/server.log", "-m", "fast", "-w", "-t", "60", "restart"])
    }

    /// `pg_ctl stop -m immediate`: the server is gone until `start()`.
    func stop() throws {
        try asPostgres(bin + "/pg_ctl", ["-D", root + "/data", "-m", "immediate", "-w", "stop"])
    }

    /// A new, migrated database on this server.
    func database() throws -> String {
        let name = "haul_p_" + UUID().uuidString.prefix(8).lowercased()
        let created = try Run.psql(serverURL, "CREATE DATABASE \(name)")
        guard created.status == 0 else { throw TestFailure("cannot create database: \(created.stderr)") }
        let url = "postgresql://postgres@127.0.0.1:\(port)/\(name)"
        let migrate = try Run.haul(["migrate"], database: url)
        guard migrate.status == 0 else { throw TestFailure("haul migrate failed: \(migrate.stderr)") }
        return url
    }

    private func asPostgres(_ program: String, _ arguments: [String]) throws {
        try Reliability.must("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments)
    }

    deinit {
        _ = try? Run.program(
            "/usr/sbin/runuser", ["-u", "postgres", "--", bin + "/pg_ctl", "-D", root + "/data", "-m", "immediate", "-w", "stop"], environment: [:])
        try? FileManager.default.removeItem(atPath: root)
    }
}
