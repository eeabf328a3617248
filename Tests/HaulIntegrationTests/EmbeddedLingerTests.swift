import Foundation
import HaulTestSupport
import Testing

/// The embedded server lingers after the last command, is reused by the next one,
/// and stops by itself when the linger is over.
@Suite("embedded server linger")
struct EmbeddedLingerTests {
    @Test("the next command within the linger reuses the running server; after the linger it stops")
    func lingerAndReuse() throws {
        let home = Harness.temporaryDirectory("linger-home")
        let pidFile = home + "/postgres/postmaster.pid"
        let environment = ["HAUL_HOME": home, "HAUL_EMBEDDED_LINGER": "4s"]
        let first = try Run.haul(["list"], database: nil, environment: environment, timeout: 120)
        #expect(first.status == 0, "\(first.stderr)")
        let postmaster = try String(contentsOfFile: pidFile, encoding: .utf8).split(separator: "\n").first
        #expect(postmaster != nil, "the server is still up after the command")

        let second = try Run.haul(["list"], database: nil, environment: environment, timeout: 120)
        #expect(second.status == 0, "\(second.stderr)")
        let reused = try String(contentsOfFile: pidFile, encoding: .utf8).split(separator: "\n").first
        #expect(reused == postmaster, "the second command used the same postmaster")

        // The first command's linger is superseded by the second's; the server stops after that one.
        #expect(Harness.waitUntil(timeout: 60) { !FileManager.default.fileExists(atPath: pidFile) }, "the server stopped after the linger")
        #expect(!FileManager.default.fileExists(atPath: home + "/postgres.linger"))
        let third = try Run.haul(["list"], database: nil, environment: ["HAUL_HOME": home, "HAUL_EMBEDDED_LINGER": "0"], timeout: 120)
        #expect(third.status == 0, "\(third.stderr)")
        #expect(!FileManager.default.fileExists(atPath: pidFile), "with no linger the command stops the server it started")
    }
}
