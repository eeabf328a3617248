import Foundation
import HaulTestSupport
import Testing

/// The services `bin/test` starts (scripts/test-services.sh) and the `haul` binary under test.
enum Harness {
    static let environment = ProcessInfo.processInfo.environment

    /// A variable `bin/test` sets; a clear failure when the suite is run without it.
    static func required(_ name: String) -> String {
        guard let value = environment[name], !value.isEmpty else {
            Issue.record("\(name) is not set: run the suite with bin/test, which starts PostgreSQL and nginx")
            return "/nonexistent-\(name)"
        }
        return value
    }

    static var databaseServer: String { required("HAUL_TEST_DATABASE_URL") }
    static var origin: String { required("HAUL_TEST_ORIGIN") }
    static var originTLS: String { required("HAUL_TEST_ORIGIN_TLS") }
    static var testCA: String { required("HAUL_TEST_CA") }
    static var docroot: String { required("HAUL_TEST_DOCROOT") }
    static var accessLog: String { required("HAUL_TEST_ACCESS_LOG") }

    /// The `haul` binary: `HAUL_BIN`, else the debug build of this checkout.
    static var haulBinary: String {
        if let bin = environment["HAUL_BIN"] { return bin }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/haul").path
    }

    /// The `haul` binary as another local user (`nobody`) can run it: a copy in a folder of its
    /// own under the temporary folder (which `bin/test` makes 1777), made once per test run. The
    /// build itself may sit in a checkout only its owner may enter (a clone under `mktemp -d`, or
    /// in /root), where another user cannot execute it.
    static func haulBinaryForOtherUsers() throws -> String {
        try otherUsersCopy.get()
    }

    private static let otherUsersCopy = Result<String, any Error> {
        let folder = NSTemporaryDirectory() + "haul-test-bin-\(UUID().uuidString.prefix(8))"
        let copy = folder + "/haul"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try writeExecutable(copy, contents: try Data(contentsOf: URL(fileURLWithPath: haulBinary)))
        return copy
    }

    /// Writes an executable through a descriptor opened close-on-exec. Other tests start
    /// processes all the while; a copy whose write descriptor leaked into one of them could not
    /// be executed until it exits ("Text file busy"), as `FileManager.copyItem` allowed.
    private static func writeExecutable(_ path: String, contents: Data) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw TestFailure("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        try contents.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let wrote = write(fd, raw.baseAddress! + offset, raw.count - offset)
                guard wrote > 0 else { throw TestFailure("cannot write \(path): \(String(cString: strerror(errno)))") }
                offset += wrote
            }
        }
        guard fchmod(fd, 0o755) == 0 else { throw TestFailure("cannot chmod \(path)") }
    }

    /// A fresh, empty folder that is removed when the process exits.
    static func temporaryDirectory(_ label: String) -> String {
        let path = NSTemporaryDirectory() + "haul-test-\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Polls `condition` every 100 ms until it holds or `timeout` seconds pass.
    @discardableResult
    static func waitUntil(timeout: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while Date() < deadline {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }
}

/// A database of its own for one test, created on the test server and migrated by `haul`.
struct TestDatabase {
    let url: String
    let name: String

    /// Creates the database, and runs `haul migrate` on it unless `migrated` is false.
    init(migrated: Bool = true) throws {
        name = "haul_t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        let server = Harness.databaseServer
        let admin = try Run.psql(server, "CREATE DATABASE \(name)")
        guard admin.status == 0 else { throw TestFailure("cannot create database: \(admin.stderr)") }
        guard let slash = server.range(of: "/", options: .backwards) else { throw TestFailure("HAUL_TEST_DATABASE_URL has no database name") }
        url = server[..<slash.lowerBound] + "/" + name
        guard migrated else { return }
        let migrate = try Run.haul(["migrate"], database: url)
        guard migrate.status == 0 else { throw TestFailure("haul migrate failed: \(migrate.stderr)") }
    }

    /// Runs SQL and returns the first column of the first row as text (or "").
    func scalar(_ sql: String) throws -> String {
        try Run.psql(url, sql).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
