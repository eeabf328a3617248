import Foundation

/// Runs a helper program to completion with `posix_spawn` and `waitpid`, its output captured
/// in a temporary file. Used instead of Foundation's `Process`, which can miss the exit of a
/// child whose own child (the PostgreSQL server that `pg_ctl start` leaves behind) lives on.
enum Subprocess {
    /// Runs `path` with `arguments`; returns its exit status and everything it printed.
    static func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let outputPath = NSTemporaryDirectory() + "haul-run-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
        defer { unlink(outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .ENOENT)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0
        return (exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), output)
    }
}
