import Foundation
import HaulTestSupport
import Testing

/// `haul get --deny-private-addresses` (or `HAUL_DENY_PRIVATE_ADDRESSES=1`), as a service that
/// wraps `haul get` around URLs its users give would run it: every spelling of this machine is
/// refused with exit 1 and one line, nothing reaches the origin and nothing is written.
@Suite("security: haul get address policy")
struct GetAddressPolicyTests {
    /// Loopback as URLs can spell it: short, hexadecimal, octal and decimal IPv4, `0.0.0.0`
    /// (which Linux connects to this machine), IPv6 and its IPv4-mapped, -compatible, NAT64,
    /// local-use NAT64, 6to4 and Teredo (server and client) forms, and names: `localhost.` and
    /// `x.localhost.` are refused even where no resolver answers them (before 2026-12-06 they
    /// failed as names that cannot be resolved, exit 4 after six attempts).
    static func loopbackSpellings(port: Int) -> [String] {
        [
            "127.0.0.1", "127.1", "127.0.1", "0x7f.1", "0x7f000001", "2130706433", "0177.0.0.1", "[::1]", "[::ffff:127.0.0.1]",
            "[0:0:0:0:0:ffff:7f00:1]", "[::127.0.0.1]", "[64:ff9b::7f00:1]", "[64:ff9b:1::7f00:1]", "[2002:7f00:1::1]", "[2001:0:7f00:1::]",
            "[2001:0:4136:e378:8000:63bf:80ff:fffe]", "0.0.0.0", "localhost", "localhost.", "LOCALHOST", "files.localhost.",
        ].map { "http://\($0):\(port)/file/secret?size=1000" }
    }

    /// Runs `haul get -q URL -o DIR/` with `extra` and `environment`, and checks the refusal:
    /// exit 1, one line naming the policy, an empty output folder.
    static func expectRefused(_ url: String, _ extra: [String], environment: [String: String] = [:], database: TestDatabase) throws {
        let output = Harness.temporaryDirectory("deny-get")
        let result = try Run.haul(["get", "-q", url, "-o", output + "/"] + extra, database: database.url, environment: environment, timeout: 60)
        #expect(result.status == 1, "\(url): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1 && result.stderr.contains("address policy refused to connect"), "\(url): \(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: output).isEmpty, "\(url) wrote into the output folder")
    }

    @Test("--deny-private-addresses: every loopback spelling is refused, nothing reaches the origin or the output folder")
    func flag() throws {
        let origin = try HostileOrigin()
        let database = try TestDatabase()
        for url in Self.loopbackSpellings(port: origin.port) {
            try Self.expectRefused(url, ["--deny-private-addresses"], database: database)
        }
        #expect(try origin.log().isEmpty, "nothing reached the loopback origin")
    }

    @Test("HAUL_DENY_PRIVATE_ADDRESSES=1 refuses as the flag does")
    func environment() throws {
        let origin = try HostileOrigin()
        let database = try TestDatabase()
        for url in Self.loopbackSpellings(port: origin.port) where !url.contains("[") {
            try Self.expectRefused(url, [], environment: ["HAUL_DENY_PRIVATE_ADDRESSES": url.contains("localhost") ? "on" : "1"], database: database)
        }
        #expect(try origin.log().isEmpty, "nothing reached the loopback origin")
    }

    @Test("an allowed origin that redirects to loopback is refused at the redirect; the allowed origin itself downloads")
    func redirectToLoopback() throws {
        let outside = try HostileOrigin(address: "127.0.0.2")
        let inside = try HostileOrigin(address: "127.0.0.1")
        let database = try TestDatabase()
        let allow = ["--deny-private-addresses", "--allow-network", "127.0.0.2/32"]
        for target in ["127.0.0.1", "localhost.", "[::1]", "0x7f.1"] {
            let to = "http://\(target):\(inside.port)/file/secret?size=1000".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            try Self.expectRefused(outside.base + "/redirect?to=" + to, allow, database: database)
        }
        #expect(try inside.log().isEmpty, "nothing reached 127.0.0.1")
        #expect(try outside.log().contains { $0.path.hasPrefix("/redirect") })

        let output = Harness.temporaryDirectory("deny-get-allowed")
        let allowed = try Run.haul(["get", "-q", outside.base + "/file/ok.bin?size=100000", "-o", output + "/ok.bin"] + allow, database: database.url)
        #expect(allowed.status == 0, "\(allowed.stderr)")
        #expect((try? FileManager.default.attributesOfItem(atPath: output + "/ok.bin")[.size] as? Int) == 100_000)
    }

    @Test("--allow-network without the policy, or a bad network, is a usage error before anything runs")
    func usage() throws {
        let cases = [
            (["--allow-network", "10.0.0.0/8"], "only with --deny-private-addresses"),
            (["--deny-private-addresses", "--allow-network", "intranet"], "'intranet' is not an IP network"),
        ]
        for (extra, message) in cases {
            let result = try Run.haul(["get", "http://127.0.0.1:9/a", "-o", Harness.temporaryDirectory("deny-get-usage") + "/"] + extra, database: nil)
            #expect(result.status == 2 && result.stderr.hasPrefix("haul: ") && result.stderr.contains(message), "\(extra): \(result.stderr)")
        }
        // A value that is neither on nor off is refused rather than read as off.
        let typo = try Run.haul(
            ["get", "http://127.0.0.1:9/a", "-o", Harness.temporaryDirectory("deny-get-usage") + "/"], database: nil,
            environment: ["HAUL_DENY_PRIVATE_ADDRESSES": "enabled"])
        #expect(typo.status == 2 && typo.stderr.contains("HAUL_DENY_PRIVATE_ADDRESSES='enabled' is neither on nor off"), "\(typo.stderr)")
    }
}
