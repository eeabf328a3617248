import Foundation
import HaulTestSupport
import Testing

/// `haul get`'s display: short flags, a progress line that fits the terminal, TERM=dumb,
/// and timestamped log lines with real rates when stderr is not a terminal.
@Suite("progress display")
struct ProgressDisplayTests {
    /// Runs `haul get` on a pseudo-terminal of `columns` columns (script(1)) and returns what it drew.
    static func onTerminal(_ arguments: [String], columns: Int, environment: String = "", database: String, directory: String) throws -> String {
        let quoted = ([Harness.haulBinary, "get"] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let command = "stty cols \(columns); cd '\(directory)' && DATABASE_URL='\(database)' \(environment) \(quoted)"
        let result = try Run.program("/usr/bin/script", ["-qec", command, "/dev/null"], environment: [:], timeout: 120)
        return result.stdout
    }

    static func slowFile(_ name: String, mebibytes: Int) throws -> String {
        let file = try Origin.file("cli/\(name)", size: mebibytes << 20)
        return Harness.origin + "/slow" + file.path  // 4 MiB/s per connection
    }

    @Test("on a terminal the progress line fits its width; TERM=dumb gets no escape sequences")
    func fitsTerminal() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("width")
        let url = try Self.slowFile("width.bin", mebibytes: 16)
        let drawn = try Self.onTerminal([url, "-o", "w.bin", "-x", "2"], columns: 50, database: database.url, directory: directory)
        let lines = drawn.replacingOccurrences(of: "\u{1B}[K", with: "").split(whereSeparator: \.isNewline)
        #expect(lines.contains { $0.contains("%") }, "a progress line was drawn: \(drawn)")
        let widest = lines.filter { $0.contains("%") }.map(\.count).max() ?? 0
        #expect(widest < 50, "no line wider than 49 columns: \(widest)\n\(lines.filter { $0.count >= 50 }.joined(separator: "\n"))")

        let dumb = try Self.onTerminal(
            [url, "-o", "d.bin", "--connections", "2"], columns: 80, environment: "TERM=dumb", database: database.url, directory: directory)
        #expect(dumb.contains("%") && !dumb.contains("\u{1B}"), "\(dumb.debugDescription)")
    }

    @Test("piped, progress lines carry a timestamp and the rate since the previous line, never 0 B/s")
    func pipedLines() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("piped")
        let url = try Self.slowFile("piped.bin", mebibytes: 64)
        let result = try Run.haul(["get", url, "-o", "p.bin", "-x2"], database: database.url, directory: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let progress = result.stderr.split(separator: "\n").filter { $0.contains("%") }
        #expect(!progress.isEmpty, "\(result.stderr)")
        let stamp = try Regex(#"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "#)
        for line in progress {
            #expect(line.prefixMatch(of: stamp) != nil, "timestamped: \(line)")
            #expect(!line.contains(" 0 B/s"), "a real rate: \(line)")
        }
    }

    @Test("short flags: -x N and -xN for --connections, -q for --quiet, -o; unknown short flags are refused")
    func shortFlags() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("short")
        let file = try Origin.file("cli/short.bin", size: 300_000)
        let quiet = try Run.haul(["get", Harness.origin + file.path, "-x8", "-q", "-o", "s.bin"], database: database.url, directory: directory)
        #expect(quiet.status == 0 && quiet.stderr.isEmpty, "-q prints nothing on success: \(quiet.stderr)")
        #expect(Origin.sha256(file: directory + "/s.bin") == file.sha256)
        let bad = try Run.haul(["get", Harness.origin + file.path, "-z"], database: database.url, directory: directory)
        #expect(bad.status == 2 && bad.stderr.contains("unknown option '-z'"), "\(bad.stderr)")
        let zero = try Run.haul(["get", Harness.origin + file.path, "-x", "0"], database: database.url, directory: directory)
        #expect(zero.status == 2 && zero.stderr.contains("--connections '0'"), "\(zero.stderr)")
    }
}
