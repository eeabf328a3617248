import Foundation
import HaulTestSupport
import Testing

/// With `--deny-private-addresses`, a worker connects to no loopback,
/// link-local or private address, also when a redirect leads there.
///
/// Every origin of the suite is on loopback, so the "outside" origin listens on 127.0.0.2 and
/// the worker allows exactly that host (`--allow-network 127.0.0.2/32`, the exception an
/// operator writes for an internal mirror); the redirect then points at 127.0.0.1, which the
/// policy must refuse after resolution, before a connection is made.
@Suite("security: address policy")
struct AddressPolicyTests {
    @Test("a redirect to 127.0.0.1 is refused; the allowed origin works; a name resolving to loopback is refused")
    func redirectToLoopback() throws {
        let outside = try HostileOrigin(address: "127.0.0.2")
        let inside = try HostileOrigin(address: "127.0.0.1")
        let cluster = try Cluster("address-policy")
        let allowed = try cluster.enqueue(outside.base + "/file/ok?size=100000", ["--dest", "ok.bin"])
        let redirected = try cluster.enqueue(
            outside.base + "/redirect?to=" + "http://127.0.0.1:\(inside.port)/file/secret?size=1000", ["--dest", "secret.bin"])
        let named = try cluster.enqueue("http://localhost:\(inside.port)/file/named?size=1000", ["--dest", "named.bin"])
        try cluster.startWorker(["--deny-private-addresses", "--allow-network", "127.0.0.2/32"])
        #expect(try cluster.waitFinal([allowed, redirected, named]) == ["done", "failed", "failed"])
        for id in [redirected, named] {
            #expect(try cluster.database.scalar("SELECT error_code FROM transfers WHERE id = \(id)") == "address-refused")
            let reason = try cluster.database.scalar("SELECT error FROM transfers WHERE id = \(id)")
            #expect(reason.contains("is a loopback address"), "\(reason)")
        }
        #expect(try inside.log().isEmpty, "nothing reached 127.0.0.1")
        #expect(try outside.log().contains { $0.path.hasPrefix("/redirect") })
    }

    @Test("--allow-network without --deny-private-addresses, or a bad network, is a usage error")
    func usage() throws {
        let database = try TestDatabase()
        let storage = Harness.temporaryDirectory("policy-usage")
        for extra in [
            ["--allow-network", "10.0.0.0/8"], ["--deny-private-addresses", "--allow-network", "10.0.0.0/33"],
            ["--deny-private-addresses", "--allow-network", "intranet"],
        ] {
            let result = try Run.haul(["worker", "--storage", storage] + extra, database: database.url, timeout: 30)
            #expect(result.status == 2, "\(extra): \(result.stderr)")
            #expect(result.stderr.hasPrefix("haul: "), "\(result.stderr)")
        }
    }
}
