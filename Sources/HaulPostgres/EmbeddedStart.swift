import CLibPQ
import Foundation
import HaulCore

/// How the embedded server is started and found running: the start parameters and the wait.
///
/// The postmaster is launched directly, in a session of its own (a Ctrl-C on the terminal
/// must not reach it), rather than through `pg_ctl start -w`: that costs two more programs
/// (`pg_ctl`, which also runs `postgres -V`, and a shell) and polls for readiness only every
/// 100 ms. Readiness is polled here with `PQping` every 5 ms, in process.
enum EmbeddedStart {
    /// Server settings beyond the socket and authentication ones (`-c name=value`).
    ///
    /// `fsync` stays on: the cluster under `HAUL_HOME` is what lets an interrupted `haul get`
    /// resume, and a cluster written with `fsync=off` may not even start after a power loss.
    /// `synchronous_commit` stays on too (the hot writes already commit without waiting; see
    /// `PostgresConnection.queryWithoutDurableCommit`). What is cut is what a private server
    /// for one user does not need: a small `shared_buffers` (the queue of one machine fits
    /// in a few MiB, and less shared memory is set up at each start), no JIT, and checkpoints
    /// spaced out so that a short command pays none. Autovacuum stays: a `haul worker` may
    /// run on this server for days.
    static let tuning = ["shared_buffers=16MB", "jit=off", "checkpoint_timeout=30min", "max_wal_size=256MB", "wal_buffers=1MB"]

    /// Whether a server accepts connections at `conninfo` now (no program is started).
    static func answers(_ conninfo: String) -> Bool {
        PQping(conninfo) == PQPING_OK
    }

    /// Starts `postgres -D data` with `arguments`, detached in its own session with its output
    /// appended to `data/server.log`, and waits until it accepts connections at `conninfo`.
    static func launch(binaries: String, data: String, arguments: [String], runAs: String?, conninfo: String, timeout: Double = 60) throws {
        let log = data + "/server.log"
        let postgres = [binaries + "/postgres", "-D", data] + arguments
        let command = runAs.map { ["/usr/sbin/runuser", "-u", $0, "--"] + postgres } ?? postgres
        let pid = try spawnDetached(command, output: log)
        // As root, the log opened here must still be the server user's, as `pg_ctl -l` would leave it.
        if let runAs, let user = getpwnam(runAs) { chown(log, user.pointee.pw_uid, user.pointee.pw_gid) }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !answers(conninfo) {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid || Date() > deadline {
                let tail = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").last.map(String.init)
                throw HaulError(
                    .embeddedPostgres, "could not start the embedded PostgreSQL: \(tail ?? "it did not answer within \(Int(timeout)) s")",
                    hint: "see \(log), or set DATABASE_URL to use another server")
            }
            usleep(5_000)
        }
    }

    /// Whether a server at `conninfo` accepts connections, once it is no longer shutting down
    /// or starting (waited for up to `timeout` seconds): one ping when it is simply up.
    static func answersOnceSettled(_ conninfo: String, timeout: Double = 30) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var status = PQping(conninfo)
        while status == PQPING_REJECT, Date() < deadline {
            usleep(10_000)
            status = PQping(conninfo)
        }
        return status == PQPING_OK
    }

    /// Stops the server of the cluster in `data` the way `pg_ctl -m fast -w stop` does (SIGINT to
    /// the postmaster named in `postmaster.pid`, then waiting until that file is gone), but polls
    /// every 5 ms where `pg_ctl` sleeps 100 ms, and starts no program (as root, `runuser` too).
    /// - Returns: whether the server is down (it was not running, or it stopped within `timeout`);
    ///   `false` when it could not be signalled or did not stop in time (the caller falls back to `pg_ctl`).
    static func stopFast(data: String, timeout: Double = 60) -> Bool {
        let pidFile = data + "/postmaster.pid"
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8) else { return !FileManager.default.fileExists(atPath: pidFile) }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // The second line names the cluster: a pid file of another cluster is never acted on.
        guard lines.count > 1, let pid = pid_t(lines[0].trimmingWhitespace()), pid > 0, lines[1] == data else { return false }
        if kill(pid, SIGINT) != 0 { return errno == ESRCH }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while FileManager.default.fileExists(atPath: pidFile) {
            // Reaped when this process started it; otherwise its parent (init) does.
            _ = waitpid(pid, nil, WNOHANG)
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// Spawns `command` in a new session, stdin from /dev/null and its output appended to
    /// `output` (or `/dev/null`); returns its pid without waiting for it.
    static func spawnDetached(_ command: [String], output: String?) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID (glibc, hidden from Swift behind _GNU_SOURCE)
        let cArguments = command.map { strdup($0) } + [nil]
        defer { cArguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, &attributes, cArguments, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .ENOENT) }
        return pid
    }
}
