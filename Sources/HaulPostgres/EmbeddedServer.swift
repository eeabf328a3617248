import Foundation
import HaulCore

/// A private PostgreSQL cluster that `haul` starts for itself when no database is configured.
///
/// The cluster lives under `$HAUL_HOME/postgres` and listens only on a Unix socket. As root
/// (where `initdb` refuses to run) the server runs as the `postgres` system user, and the
/// cluster moves to `/var/lib/haul` when that user cannot reach `$HAUL_HOME`.
public final class EmbeddedServer: Sendable {
    /// The conninfo string that reaches the server.
    public let conninfo: String
    private let dataDirectory: String
    private let runAs: String?

    /// Starts the cluster (creating it on first use), or joins one that is already running.
    /// - Parameter home: the `HAUL_HOME` directory.
    public init(home: String) throws {
        let binaries = try Self.serverBinaries()
        let runAs = getuid() == 0 ? "postgres" : nil
        // As root the server's user must be able to pass through (not list) the folders above its cluster.
        let folderMode = runAs == nil ? 0o700 : 0o711
        try? FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: folderMode])
        let data = Self.dataDirectory(home: home, runAs: runAs)
        let socketDirectory = "/tmp/haul-pg-\(Self.shortHash(data))"
        self.dataDirectory = data
        self.runAs = runAs
        self.conninfo = "host=\(socketDirectory) dbname=postgres user=haul"

        try FileManager.default.createDirectory(
            atPath: (data as NSString).deletingLastPathComponent, withIntermediateDirectories: true, attributes: [.posixPermissions: folderMode])
        try Self.prepareDirectory(socketDirectory, owner: runAs)
        if !FileManager.default.fileExists(atPath: data + "/PG_VERSION") {
            try Self.prepareDirectory(data, owner: runAs)
            try Self.run(binaries + "/initdb", ["-D", data, "-U", "haul", "--auth=trust", "-E", "UTF8", "--no-instructions"], as: runAs, step: "initdb")
        }
        EmbeddedLinger.markInUse(data: data)
        EmbeddedStart.waitWhileBusy(conninfo)  // a lingering server may be stopping right now
        if EmbeddedStart.answers(conninfo) { return }
        let options = ["-k", socketDirectory, "-c", "listen_addresses=", "-c", "unix_socket_permissions=0777", "-c", "max_connections=200", "-c", "fsync=on"]
        try EmbeddedStart.launch(
            binaries: binaries, data: data, arguments: options + EmbeddedStart.tuning.flatMap { ["-c", $0] }, runAs: runAs, conninfo: conninfo)
    }

    /// The last command using the server is done: stops it after the linger
    /// (`HAUL_EMBEDDED_LINGER`, see `EmbeddedLinger`), or at once when that is 0.
    public func release() {
        let seconds = EmbeddedLinger.seconds()
        guard seconds > 0, let binaries = try? Self.serverBinaries() else { return stop() }
        let stop = [binaries + "/pg_ctl", "-D", dataDirectory, "-m", "fast", "-w", "stop"]
        do {
            try EmbeddedLinger.schedule(data: dataDirectory, seconds: seconds, stop: runAs.map { ["/usr/sbin/runuser", "-u", $0, "--"] + stop } ?? stop)
        } catch {
            self.stop()
        }
    }

    /// Stops the server. The caller decides when: `haul` stops it when no other `haul` is connected.
    public func stop() {
        guard let binaries = try? Self.serverBinaries() else { return }
        _ = try? Self.run(binaries + "/pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"], as: runAs, step: "stop")
    }

    static func dataDirectory(home: String, runAs: String?) -> String {
        let preferred = home + "/postgres"
        guard let runAs else { return preferred }
        if (try? run("/usr/bin/test", ["-x", home], as: runAs, step: "probe")) != nil { return preferred }
        return "/var/lib/haul/postgres-\(shortHash(home))"
    }

    /// Finds `initdb` and `pg_ctl`: `HAUL_PG_BIN`, then the newest `/usr/lib/postgresql/*/bin`.
    static func serverBinaries() throws -> String {
        if let configured = ProcessInfo.processInfo.environment["HAUL_PG_BIN"] { return configured }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let candidates = versions.compactMap(Int.init).sorted(by: >).map { "\(root)/\($0)/bin" }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }) else {
            throw HaulError(
                "embedded-postgres-missing", "no DATABASE_URL is set and no PostgreSQL server is installed to start an embedded one",
                hint: "install the 'postgresql' package (apt-get install postgresql), or set DATABASE_URL")
        }
        return found
    }

    private static func prepareDirectory(_ path: String, owner: String?) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if let owner {
            try run("/bin/chown", [owner + ":", path], as: nil, step: "chown")
        }
    }

    @discardableResult
    private static func run(_ tool: String, _ arguments: [String], as user: String?, step: String) throws -> String {
        let (path, words) = user.map { ("/usr/sbin/runuser", ["-u", $0, "--", tool] + arguments) } ?? (tool, arguments)
        let (status, text) = try Subprocess.run(path, words)
        guard status == 0 else {
            throw HaulError(
                "embedded-postgres", "could not \(step) the embedded PostgreSQL: \(text.trimmingWhitespace().split(separator: "\n").last ?? "exit \(status)")",
                hint: "see the server log under the cluster directory, or set DATABASE_URL to use another server")
        }
        return text
    }

    static func shortHash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash & 0xffff_ffff, radix: 16)
    }
}
