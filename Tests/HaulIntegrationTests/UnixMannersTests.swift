import Foundation
import HaulTestSupport
import Testing

/// What people used to git, curl and kubectl expect of a command line: a closed pipe is a normal
/// end, `--version`, suggestions for typos.
@Suite("unix manners")
struct UnixMannersTests {
    /// Runs `haul ARGS` with its standard output a pipe whose reader is already gone, so its
    /// first write fails with EPIPE (SIGPIPE, were it not ignored).
    static func withClosedStdout(_ arguments: [String], database: String) throws -> (status: Int32, stderr: String) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw TestFailure("pipe: errno \(errno)") }
        close(fds[0])
        let errPath = NSTemporaryDirectory() + "haul-epipe-\(UUID().uuidString.prefix(8)).err"
        defer { unlink(errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // As from a shell: SIGPIPE at its default (kills the process unless haul ignores it), nothing blocked.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var env = ProcessInfo.processInfo.environment
        env["DATABASE_URL"] = database
        let argv = ([Harness.haulBinary] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, Harness.haulBinary, &actions, &attributes, argv, envp)
        close(fds[1])
        guard spawned == 0 else { throw TestFailure("cannot start haul: errno \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return (code, (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }

    @Test("a closed standard output is a normal end for every command that prints")
    func closedStdout() throws {
        let database = try TestDatabase()
        let manifest = (1...50).map { "http://127.0.0.1:9/f\($0).bin" }.joined(separator: "\n")
        let path = Harness.temporaryDirectory("epipe") + "/manifest.txt"
        try manifest.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Run.haul(["enqueue", "--manifest", path, "--batch", "pipe"], database: database.url).status == 0)
        let commands: [[String]] = [
            ["--help"], ["--version"], ["list"], ["list", "--json"], ["status", "1"], ["status", "1", "--json"], ["status", "--batch", "pipe"],
            ["workers"], ["host-limit", "list"], ["get", "--help"], ["pause", "1", "2"], ["prune", "--older-than", "7d"],
        ]
        for command in commands {
            let result = try Self.withClosedStdout(command, database: database.url)
            #expect(result.status == 0, "haul \(command.joined(separator: " ")) with stdout closed: status \(result.status) \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("Backtrace"), "\(result.stderr)")
        }
    }

    @Test("haul list | head -1 ends quietly with status 0")
    func listIntoHead() throws {
        let database = try TestDatabase()
        let manifest = (1...3000).map { "http://127.0.0.1:9/some/long/path/to/a/file-\($0).bin" }.joined(separator: "\n")
        let path = Harness.temporaryDirectory("head") + "/manifest.txt"
        try manifest.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try Run.haul(["enqueue", "--manifest", path, "--batch", "head"], database: database.url).status == 0)
        let result = try Run.program(
            "/bin/bash", ["-c", "\"$0\" list --limit 3000 | head -1; echo \"status=${PIPESTATUS[0]}\"", Harness.haulBinary],
            environment: ["DATABASE_URL": database.url])
        #expect(result.stdout.hasPrefix("ID") && result.stdout.contains("status=0"), "\(result.stdout) \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
    }

    @Test("--version, -V and 'version' print the version", arguments: [["--version"], ["-V"], ["version"]])
    func version(arguments: [String]) throws {
        let result = try Run.haul(arguments, database: nil)
        #expect(result.status == 0 && result.stdout.hasPrefix("haul ") && result.stdout.split(separator: "\n").count == 1, "\(result.stdout)")
    }

    @Test("typos get the nearest command, flag or state; an unknown --option is called an option")
    func suggestions() throws {
        let cases: [(words: [String], expected: [String])] = [
            (["gte", "http://x/"], ["unknown command 'gte'", "did you mean 'get'?"]),
            (["stauts", "1"], ["unknown command 'stauts'", "did you mean 'status'?"]),
            (["--foo"], ["unknown option '--foo'"]),
            (["--verison"], ["unknown option '--verison'", "did you mean '--version'?"]),
            (["list", "--stat", "done"], ["unknown option '--stat'", "did you mean '--state'?"]),
            (["list", "--state", "fialed"], ["not a state", "did you mean 'failed'?"]),
            (["enqueue", "http://h/x", "--dset", "x"], ["unknown option '--dset'", "did you mean '--dest'?"]),
        ]
        for (words, expected) in cases {
            let result = try Run.haul(words, database: "postgresql://haul@127.0.0.1:1/nowhere")
            #expect(result.status == 2, "\(words): \(result.status)")
            #expect(result.stderr.hasPrefix("haul: ") && result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(expected.allSatisfy { result.stderr.contains($0) }, "\(words): \(result.stderr)")
        }
        let far = try Run.haul(["frobnicate"], database: nil)
        #expect(far.status == 2 && !far.stderr.contains("did you mean"), "no wild guesses: \(far.stderr)")
    }
}
