import Foundation

/// Runs programs the way a user would, with `posix_spawn`, capturing their output.
public enum Run {
    /// How a program ended and what it printed.
    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Runs any program to completion (killed after `timeout` seconds), with `stdin` as its
    /// standard input (none: `/dev/null`).
    public static func program(
        _ path: String, _ arguments: [String], environment: [String: String] = [:], directory: String? = nil, stdin: String? = nil,
        timeout: Double = 120
    ) throws -> Result {
        let child = try Child(path, arguments, environment: environment, directory: directory, stdin: stdin)
        guard child.wait(timeout: timeout) else {
            child.signal(SIGKILL)
            _ = child.wait(timeout: 5)
            throw TestFailure("\(path) \(arguments.joined(separator: " ")) did not finish in \(timeout)s; stderr: \(child.stderr)")
        }
        return Result(status: child.exitStatus ?? -1, stdout: child.stdout, stderr: child.stderr)
    }
}

/// A child process (a `haul worker`, say) that a test starts, signals and waits for.
public final class Child: @unchecked Sendable {
    // Touched only by the test that owns it, on one task at a time.
    public let pid: pid_t
    private let outPath: String
    private let errPath: String
    private let inPath: String?
    public private(set) var exitStatus: Int32?

    /// Starts `path` with `arguments`, the test process's environment less `DATABASE_URL` plus
    /// `environment`, in `directory`, reading `stdin` (none: `/dev/null`).
    public init(_ path: String, _ arguments: [String], environment: [String: String], directory: String? = nil, stdin: String? = nil) throws {
        let base = NSTemporaryDirectory() + "haul-child-\(UUID().uuidString.prefix(8))"
        outPath = base + ".out"
        errPath = base + ".err"
        inPath = stdin.map { _ in base + ".in" }
        if let inPath, let stdin { try Data(stdin.utf8).write(to: URL(fileURLWithPath: inPath)) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inPath ?? "/dev/null", O_RDONLY, 0)
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
    public func signal(_ number: Int32) {
        if exitStatus == nil { kill(pid, number) }
    }

    /// Waits up to `timeout` seconds; returns whether the process has exited.
    public func wait(timeout: Double) -> Bool {
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
    public var isRunning: Bool { !wait(timeout: 0) }

    /// What it printed on standard output so far.
    public var stdout: String { (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "" }
    /// What it printed on standard error so far.
    public var stderr: String { (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "" }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 5)
        }
        unlink(outPath)
        unlink(errPath)
        if let inPath { unlink(inPath) }
    }
}
