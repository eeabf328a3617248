import Foundation
import HaulTestSupport
import Testing

/// The dashboard's tables, read through `haul dashboard` as an API client and a browser do:
/// failure reasons keep HTTP statuses apart, attempts agree with the messages, columns sort.
@Suite(.serialized) struct DashboardTableTests {
    @Test("failures are grouped by code and HTTP status, and a transfer that gave up after 2 attempts says 2")
    func failuresAndAttempts() throws {
        let served = try DashboardTests.Served("dash-tables")
        let bearer = "Authorization: Bearer \(DashboardTests.token)"
        let url = served.cluster.database.url
        var ids: [Int64] = []
        for (index, error) in [
            "origin answered 404 Not Found for http://127.0.0.1:9/a.bin",
            "origin answered 503 Service Unavailable for http://127.0.0.1:9/b.bin (gave up after 2 attempts)",
            "origin answered 503 Service Unavailable for http://127.0.0.1:9/c.bin (gave up after 2 attempts)",
        ].enumerated() {
            let id = try served.cluster.enqueue("http://127.0.0.1:9/\(index).bin")
            _ = try Run.psql(url, "UPDATE transfers SET state = 'failed', error_code = 'origin-status', error = '\(error)', attempts = 2 WHERE id = \(id)")
            ids.append(id)
        }
        let overview = try JSONSerialization.jsonObject(with: Data(try served.request("GET", "/api/overview", headers: [bearer]).body.utf8)) as? [String: Any]
        let reasons = (overview?["failures"] as? [[String: Any]] ?? []).map { "\($0["code"] ?? "") \($0["count"] ?? "")" }
        #expect(reasons == ["origin-status 503 2", "origin-status 404 1"], "a 404 and a 503 are not one reason: \(reasons)")

        let detail = try served.request("GET", "/api/transfers/\(ids[1])", headers: [bearer]).body
        #expect(detail.contains(#""attempts":2"#), "the attempts agree with 'gave up after 2 attempts': \(detail.prefix(300))")

        _ = try Run.psql(url, "UPDATE transfers SET size = 1000 * id WHERE id = ANY('{\(ids.map(String.init).joined(separator: ","))}')")
        _ = try served.logIn()
        func order(_ query: String) throws -> [String] {
            let page = try served.request("GET", "/transfers" + query).body
            return page.matches(of: /<tr data-transfer-id="([0-9]+)"/).map { String($0.1) }
        }
        #expect(try order("?sort=size&dir=asc") == ids.map(String.init), "sorted by size, smallest first")
        #expect(try order("?sort=size&dir=desc") == ids.reversed().map(String.init), "and largest first")
        let page = try served.request("GET", "/transfers?sort=size&dir=asc").body
        #expect(page.contains(#"data-sort="size" aria-sort="ascending""#), "the heading says how the list is sorted")
    }

    @Test("a transfer's page and the transfer list say why it waits, as 'haul status' does")
    func transferPageSaysWhyItWaits() throws {
        let served = try DashboardTests.Served("dash-waiting")
        let id = try served.cluster.enqueue("http://127.0.0.1:9/w.bin")
        #expect(try served.cluster.haul(["pause", String(id)]).status == 0)
        let cli = try #require(try served.cluster.status(id)["waiting"] as? String)
        let detail =
            try JSONSerialization.jsonObject(
                with: Data(try served.request("GET", "/api/transfers/\(id)", headers: ["Authorization: Bearer \(DashboardTests.token)"]).body.utf8))
            as? [String: Any]
        #expect(detail?["waiting"] as? String == cli)
        #expect(detail?["waiting_reason"] as? String == "paused")
        _ = try served.logIn()
        let page = try served.request("GET", "/transfers/\(id)").body
        #expect(page.contains(#"data-field="waiting">waits: it is paused; "#), "\(page)")
        #expect(!page.contains("'haul resume"), "quotes are escaped in the page")
        // The list says it too, in its page and in the JSON its rows are polled with.
        let list = try served.request("GET", "/transfers").body
        #expect(list.contains(#"data-field="waiting">waits: it is paused; "#), "\(list)")
        let listed =
            try JSONSerialization.jsonObject(
                with: Data(try served.request("GET", "/api/transfers", headers: ["Authorization: Bearer \(DashboardTests.token)"]).body.utf8))
            as? [String: Any]
        let rows = listed?["transfers"] as? [[String: Any]] ?? []
        #expect(rows.first { $0["id"] as? Int == Int(id) }?["waiting"] as? String == cli, "\(rows)")
        #expect(rows.first { $0["id"] as? Int == Int(id) }?["waiting_reason"] as? String == "paused", "\(rows)")
        // Its host filter reads a host as `haul list --host` does: case and port 80 aside.
        func filtered(_ host: String) throws -> [[String: Any]] {
            let body = try served.request("GET", "/api/transfers?host=\(host)", headers: ["Authorization: Bearer \(DashboardTests.token)"]).body
            return (try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["transfers"] as? [[String: Any]] ?? []
        }
        #expect(try filtered("127.0.0.1:9").map { $0["id"] as? Int } == [Int(id)])
        let other = try served.cluster.enqueue("http://Other.test:80/o.bin")
        #expect(try filtered("OTHER.test:80").map { $0["id"] as? Int } == [Int(other)])
        #expect(try filtered("a%20b").isEmpty, "no host name at all matches nothing")
    }

    @Test("without JavaScript a batch action asks on a page of its own first, and acts once confirmed")
    func batchActionAsksWithoutJavaScript() throws {
        let served = try DashboardTests.Served("dash-confirm")
        let manifest = (0..<3).map { "http://127.0.0.1:9/n\($0).bin n/\($0).bin" }.joined(separator: "\n")
        let path = Harness.temporaryDirectory("dash-confirm") + "/m.txt"
        try manifest.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try served.cluster.haul(["enqueue", "--manifest", path, "--batch", "nightly"]).status == 0)
        _ = try Run.psql(served.cluster.database.url, "UPDATE transfers SET state = 'paused', paused_from = 'pending'")
        let csrf = try served.logIn()
        func states() throws -> String { try served.cluster.database.scalar("SELECT string_agg(DISTINCT state, ',') FROM transfers") }

        let asked = try served.request(
            "POST", "/api/batches/nightly/cancel", headers: ["Origin: \(served.base)"], form: "csrf=\(csrf)&return=%2Fbatches")
        #expect(asked.status == 200 && asked.body.contains("Cancel 3 transfers of batch nightly?"), "\(asked.status) \(asked.body.prefix(400))")
        #expect(asked.body.contains(#"role="alertdialog""#))
        #expect(try states() == "paused", "asking changed nothing")

        let confirmed = try served.request(
            "POST", "/api/batches/nightly/cancel", headers: ["Origin: \(served.base)"], form: "csrf=\(csrf)&return=%2Fbatches&confirmed=1")
        #expect(confirmed.status == 303)
        #expect(try states() == "canceled")
    }
}
