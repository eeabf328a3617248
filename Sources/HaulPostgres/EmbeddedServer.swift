import Foundation
import HaulCore

/// A private PostgreSQL cluster that `haul` starts for itself when no database is configured.
///
/// The cluster lives under `$HAUL_HOME/postgres` and listens only on a Unix socket. As root
/// (where `initdb` refuses to run) the server runs as the `postgres` system user, and the
/// cluster moves to `/var/lib/haul` when that user cannot reach `$HAUL_HOME`.
///
/// It belongs to the user that runs `haul` alone: `HAUL_HOME` must be theirs and not writable by
/// others, the cluster's folder is the server user's with mode 0700, the socket sits in that folder
/// (or, when that path is too long for a socket, in a fresh `mkdtemp` folder under `/tmp`) with mode
/// 0700, and connections are authenticated by peer credentials mapped to the one user that runs
/// `haul` (`pg_hba.conf` and `pg_ident.conf` are rewritten at every start). Existing folders are never
/// chowned or chmodded: a wrong owner or a loose mode refuses the start with `embedded-postgres-unsafe`.
public final class EmbeddedServer: Sendable {
    /// The conninfo string that reaches the server.
    public let conninfo: String
    private let dataDirectory: String
    private let runAs: String?
    private let socketDirectory: String

    /// The longest socket folder: `sun_path` holds 107 bytes and a NUL, and PostgreSQL adds `/.s.PGSQL.5432`.
    static let maxSocketDirectoryLength = 107 - "/.s.PGSQL.5432".utf8.count

    /// Starts the cluster (creating it on first use), or joins one that is already running.
    /// - Parameter home: the `HAUL_HOME` directory.
    public init(home: String) throws {
        let binaries = try Self.serverBinaries()
        let runAs = getuid() == 0 ? "postgres" : nil
        let client = try PrivateDirectory.account(nil)
        let server = try PrivateDirectory.account(runAs)
        // As root the server's user must be able to pass through (not list) the folders above its cluster.
        let folderMode: mode_t = runAs == nil ? 0o700 : 0o711
        try? FileManager.default.createDirectory(
            atPath: (home as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try PrivateDirectory.ensure(home, owner: client, mode: folderMode, forbidden: 0o022, followLinks: true, what: "HAUL_HOME")
        let data = Self.dataDirectory(home: home, runAs: runAs)
        let parent = (data as NSString).deletingLastPathComponent
        if parent != home {
            try PrivateDirectory.ensure(parent, owner: client, mode: folderMode, forbidden: 0o022, followLinks: false, what: "the folder")
        }
        try PrivateDirectory.ensure(data, owner: server, mode: 0o700, forbidden: 0o077, followLinks: false, what: "the cluster folder")
        self.dataDirectory = data
        self.runAs = runAs

        if !FileManager.default.fileExists(atPath: data + "/PG_VERSION") {
            try Self.run(
                binaries + "/initdb", ["-D", data, "-U", "haul", "--auth-local=peer", "--auth-host=reject", "-E", "UTF8", "--no-instructions"],
                as: runAs, step: "initdb")
        }
        EmbeddedLinger.markInUse(data: data)
        // A running (or lingering) server announces its socket folder in postmaster.pid; it is
        // joined only when that folder passes the same ownership checks.
        if FileManager.default.fileExists(atPath: data + "/postmaster.pid"),
            let running = try Self.runningSocketDirectory(data: data, server: server)
        {
            let reach = Self.conninfo(running)
            // A lingering server may be stopping right now: wait that out, then join it if it answers.
            if EmbeddedStart.answersOnceSettled(reach) {
                socketDirectory = running
                conninfo = reach
                return
            }
        }
        try PrivateDirectory.writeFile(data + "/pg_hba.conf", Self.hostBasedAuthentication, owner: server)
        try PrivateDirectory.writeFile(data + "/pg_ident.conf", Self.identMap(client: client.name), owner: server)
        let socket = data.utf8.count <= Self.maxSocketDirectoryLength ? data : try Self.makeTemporarySocketDirectory(server: server)
        socketDirectory = socket
        conninfo = Self.conninfo(socket)
        let options = ["-k", socket, "-c", "listen_addresses=", "-c", "unix_socket_permissions=0700", "-c", "max_connections=200", "-c", "fsync=on"]
        do {
            try EmbeddedStart.launch(
                binaries: binaries, data: data, arguments: options + EmbeddedStart.tuning.flatMap { ["-c", $0] }, runAs: runAs, conninfo: conninfo)
        } catch {
            if socket != data { rmdir(socket) }
            throw error
        }
    }

    /// The last command using the server is done: stops it after the linger
    /// (`HAUL_EMBEDDED_LINGER`, see `EmbeddedLinger`), or at once when that is 0. A temporary
    /// socket folder is removed with the stop.
    public func release() {
        let seconds = EmbeddedLinger.seconds()
        guard seconds > 0, let binaries = try? Self.serverBinaries() else { return stop() }
        let pgStop = [binaries + "/pg_ctl", "-D", dataDirectory, "-m", "fast", "-w", "stop"]
        var command = runAs.map { ["/usr/sbin/runuser", "-u", $0, "--"] + pgStop } ?? pgStop
        if socketDirectory != dataDirectory {
            command = ["/bin/sh", "-c", "\"$@\"; rmdir \"$0\"", socketDirectory] + command
        }
        do {
            try EmbeddedLinger.schedule(data: dataDirectory, seconds: seconds, stop: command)
        } catch {
            stop()
        }
    }

    /// Only the user that runs `haul`, mapped to the database user `haul`, over the Unix socket.
    static let hostBasedAuthentication = """
        # Written by haul at every start of its embedded server: the user that runs haul, over the
        # Unix socket, authenticated by its peer credentials (see pg_ident.conf); nothing else.
        local all haul peer map=haul

        """

    /// Maps the operating-system user that runs `haul` (root, when the server runs as `postgres`) to `haul`.
    static func identMap(client: String) -> String {
        "# Written by haul at every start of its embedded server.\nhaul \"\(client.replacingOccurrences(of: "\"", with: ""))\" haul\n"
    }

    /// The socket folder a running server announced in `postmaster.pid` (its fifth line), if it is the
    /// cluster's own folder or a `mkdtemp` folder of the server's user with mode 0700; `nil` when the
    /// file names none (a server starting or stopping). Any other folder refuses the join.
    static func runningSocketDirectory(data: String, server: PrivateDirectory.Account) throws -> String? {
        let lines = ((try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8)) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count > 4, case let socket = String(lines[4]), socket.startsWithSlash else { return nil }
        let temporary = socket.hasPrefix("/tmp/haul-pg-") && !socket.dropFirst(5).containsSlash
        guard socket == data || temporary else {
            throw HaulError(
                .embeddedPostgresUnsafe, "refusing to join the embedded PostgreSQL in \(data): its socket is in \(socket)",
                hint: "stop it (pg_ctl -D \(data) stop) and run haul again")
        }
        try PrivateDirectory.check(socket, owner: server, forbidden: 0o077, followLinks: false, what: "the socket folder")
        return socket
    }

    /// A fresh `/tmp/haul-pg-XXXXXX` folder (mode 0700, given to the server's user while empty), for a
    /// cluster whose own path is too long to hold the socket.
    private static func makeTemporarySocketDirectory(server: PrivateDirectory.Account) throws -> String {
        var template = Array("/tmp/haul-pg-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HaulError(
                .embeddedPostgres, "cannot create a socket folder in /tmp: \(String(cString: strerror(errno)))",
                hint: "choose a shorter HAUL_HOME, or set DATABASE_URL")
        }
        let path = String(cString: made)
        if server.uid != geteuid(), chown(path, server.uid, server.gid) != 0 {
            rmdir(path)
            throw HaulError(.embeddedPostgres, "cannot give the socket folder \(path) to \(server.name)", hint: "set DATABASE_URL")
        }
        try PrivateDirectory.check(path, owner: server, forbidden: 0o077, followLinks: false, what: "the socket folder")
        return path
    }

    /// `host=… dbname=postgres user=haul`, the folder quoted for libpq.
    static func conninfo(_ socket: String) -> String {
        let quoted = socket.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
        return "host='\(quoted)' dbname=postgres user=haul"
    }

    /// Stops the server. The caller decides when: `haul` stops it when no other `haul` is connected.
    public func stop() {
        // A server that is already down (or stopped by another command) is what stopping wants.
        if !EmbeddedStart.stopFast(data: dataDirectory), let binaries = try? Self.serverBinaries() {
            _ = try? Self.run(binaries + "/pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"], as: runAs, step: "stop")
        }
        if socketDirectory != dataDirectory { rmdir(socketDirectory) }
    }

    /// Where the cluster of `home` lives: `home/postgres`, or, when the server's user `runAs`
    /// cannot pass through `home`, `/var/lib/haul/postgres-HASH`. A cluster stays where it was
    /// made (its queue is there), so the probe, a program started as `runAs`, runs only for a
    /// cluster yet to be made.
    static func dataDirectory(home: String, runAs: String?) -> String {
        let preferred = home + "/postgres"
        guard let runAs else { return preferred }
        let fallback = "/var/lib/haul/postgres-\(shortHash(home))"
        for made in [preferred, fallback] where FileManager.default.fileExists(atPath: made + "/PG_VERSION") { return made }
        if (try? run("/usr/bin/test", ["-x", home], as: runAs, step: "probe")) != nil { return preferred }
        return fallback
    }

    /// Finds `initdb` and `pg_ctl`: `HAUL_PG_BIN`, then the newest `/usr/lib/postgresql/*/bin`.
    static func serverBinaries() throws -> String {
        if let configured = ProcessInfo.processInfo.environment["HAUL_PG_BIN"] { return configured }
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let candidates = versions.compactMap(Int.init).sorted(by: >).map { "\(root)/\($0)/bin" }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/initdb") }) else {
            throw HaulError(
                .embeddedPostgresMissing, "no DATABASE_URL is set and no PostgreSQL server is installed to start an embedded one",
                hint: "install the 'postgresql' package (apt-get install postgresql), or set DATABASE_URL")
        }
        return found
    }

    @discardableResult
    private static func run(_ tool: String, _ arguments: [String], as user: String?, step: String) throws -> String {
        let (path, words) = user.map { ("/usr/sbin/runuser", ["-u", $0, "--", tool] + arguments) } ?? (tool, arguments)
        let (status, text) = try Subprocess.run(path, words)
        guard status == 0 else {
            throw HaulError(
                .embeddedPostgres, "could not \(step) the embedded PostgreSQL: \(text.trimmingWhitespace().split(separator: "\n").last ?? "exit \(status)")",
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
