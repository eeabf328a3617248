import Foundation

/// Runs programs the way a user would, with `posix_spawn`, capturing their output.
enum Run {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs `haul ARGS` to completion with `DATABASE_URL` set (unless `database` is nil).
    static func haul(_ arguments: [String], database: String?, environment: [String: String] = [:], directory: String? = nil, timeout: Double = 120) throws -> Result {
        var env = environment
        if let database { env["DATABASE_URL"] = database }
        return try program(Harness.haulBinary, arguments, environment: env, directory: directory, timeout: timeout)
    }

    /// Runs SQL through psql, unaligned and tuples-only.
    static func psql(_ url: String, _ sql: String) throws -> Result {
        try program("/usr/bin/psql", ["-X", "-tA", "-v", "ON_ERROR_STOP=1", url, "-c", sql], environment: [:])
    }

    /// Runs any program to completion (killed after `timeout` seconds).
    static func program(_ path: String, _ arguments: [String], environment: [String: String], directory: String? = nil, timeout: Double = 120) throws -> Result {
        let child = try Child(path, arguments, environment: environment, directory: directory)
        guard child.wait(timeout: timeout) else {
            child.signal(SIGKILL)
            _ = child.wait(timeout: 5)
            throw TestFailure("\(path) \(arguments.joined(separator: " ")) did not finish in \(timeout)s; stderr: \(child.stderr)")
        }
        return Result(status: child.exitStatus ?? -1, stdout: child.stdout, stderr: child.stderr)
    }
}

/// A child process (a `haul worker`, say) that a test starts, signals and waits for.
final class Child: @unchecked Sendable {
    // Touched only by the test that owns it, on one task at a time.
    let pid: pid_t
    private let outPath: String
    private let errPath: String
    private(set) var exitStatus: Int32?

    init(_ path: String, _ arguments: [String], environment: [String: String], directory: String? = nil) throws {
        let base = NSTemporaryDirectory() + "haul-child-\(UUID().uuidString.prefix(8))"
        outPath = base + ".out"
        errPath = base + ".err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DATABASE_URL")
        for (key, value) in environment { env[key] = value }
        // posix_spawn has no portable chdir action here: a shell changes folder, then execs.
        let words = directory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0, path] + arguments } ?? [path] + arguments
        let argv = words.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        // Test threads may block signals; the child starts with none blocked, as from a shell.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        var pid: pid_t = 0
        let result = posix_spawn(&pid, words[0], &actions, &attributes, argv, envp)
        guard result == 0 else { throw TestFailure("cannot start \(path): errno \(result)") }
        self.pid = pid
    }

    /// Sends a signal.
    func signal(_ number: Int32) {
        if exitStatus == nil { kill(pid, number) }
    }

    /// Waits up to `timeout` seconds; returns whether the process has exited.
    func wait(timeout: Double) -> Bool {
        if exitStatus != nil { return true }
        let deadline = Date(timeIntervalSinceNow: timeout)
        repeat {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                return true
            }
            usleep(20_000)
        } while Date() < deadline
        return false
    }

    /// Whether the process is still running.
    var isRunning: Bool { !wait(timeout: 0) }

    var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 5)
        }
        unlink(outPath)
        unlink(errPath)
    }
}
