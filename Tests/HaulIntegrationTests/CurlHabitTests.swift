import Foundation
import HaulTestSupport
import Testing

/// What curl and wget users type at `haul get`: the flags that mean the same work, the others
/// are refused with one line naming Haul's way.
@Suite("get: curl and wget habits")
struct CurlHabitTests {
    @Test("-s -H -k -L -f --retry N --output-dir work as in curl: a quiet download with the header into the folder")
    func flagsThatWork() throws {
        let database = try TestDatabase()
        let directory = Harness.temporaryDirectory("habits")
        let file = try Origin.file("habits/secret.bin", size: 70_000)
        let result = try Run.haul(
            [
                "get", Harness.origin + "/secret" + file.path, "-s", "-H", "Authorization: Bearer test-token", "-k", "-L", "-f", "--retry", "2",
                "--output-dir", "out",
            ], database: database.url, directory: directory)
        #expect(result.status == 0 && result.stderr.isEmpty, "exit \(result.status): \(result.stderr)")
        #expect(Origin.sha256(file: directory + "/out/secret.bin") == file.sha256)
    }

    @Test("-O, -J, -C -, -c and their long names are refused with Haul's way; --retry with --max-attempts, -o /dev/null too")
    func habitsRefused() throws {
        let url = "http://127.0.0.1:9/a.bin"
        let cases: [([String], String)] = [
            (["-O"], "give -o FILE"),
            (["--remote-name"], "give -o FILE"),
            (["-OJ"], "give -o FILE"),
            (["-C", "-"], "resumes by itself: run the same command again"),
            (["--continue-at", "-"], "resumes by itself"),
            (["-c"], "wget's resume"),
            (["--retry", "2", "--max-attempts", "3"], "--retry N is --max-attempts N+1"),
            (["--retry", "-1"], "not a whole number of retries"),
            (["--output-dir", "out", "-o", "/tmp/x.bin"], "give -o the whole path"),
            (["-o", "/dev/null"], "-o - > /dev/null"),
        ]
        for (flags, hint) in cases {
            let result = try Run.haul(["get", url] + flags, database: nil)
            #expect(result.status == 2 && result.stderr.contains(hint), "\(flags): exit \(result.status): \(result.stderr)")
        }
    }
}
