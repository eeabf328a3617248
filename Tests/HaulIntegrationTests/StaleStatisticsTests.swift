import HaulPostgres
import HaulTestSupport
import Testing

@testable import HaulQueue

/// The statements a batch runs for each of its claims keep a plan that reaches the claims' rows
/// by an index on their keys when the table's statistics predate what the batch reads (taken
/// when it was enqueued: no lease, no done row yet). Planned as joins, they read the whole
/// table for each batch, in the worst shape for each claim: time in the square of a list's
/// length. Each test explains the statement as it runs (an unnamed statement, planned for
/// its values) on such a table.
@Suite("plans made from statistics older than the rows")
struct StaleStatisticsTests {
    /// The plan of `sql` with `$1`, `$2`… replaced by `values` (array literals).
    private func plan(_ conn: PostgresConnection, _ sql: String, _ values: [String]) throws -> String {
        var text = sql
        // From the last, so that `$1` does not take the start of `$10`.
        for (index, value) in values.enumerated().reversed() { text = text.replacingOccurrences(of: "$\(index + 1)", with: value) }
        return try conn.query("EXPLAIN \(text)").rows.compactMap { $0["QUERY PLAN"] }.joined(separator: "\n")
    }

    /// `values` as an SQL array literal of `type`.
    private func array(_ values: [String], _ type: String) -> String {
        "'{\(values.map { "\"\($0)\"" }.joined(separator: ","))}'::\(type)[]"
    }

    /// A table of 3000 pending transfers of `host`, analyzed before any lease, and a batch claim
    /// of 1024 of them by `worker-a`.
    private func claimedBatch(_ conn: PostgresConnection, host: String) throws -> (TransferLeases, [TransferLeases.Claim]) {
        try HostLimits.set(conn, host: host, limit: 64)
        let entries = (0..<3000).map { NewTransfer(url: "http://\(host)/f-\($0)", dest: "f-\($0)", segmentSize: 4 << 20) }
        _ = try Batches(conn).enqueue(entries, batch: host)
        _ = try conn.query("ANALYZE transfers")
        let leases = TransferLeases(conn, workerID: "worker-a")
        let claims = try leases.claimPlanning(lease: 30, limit: 1024, connections: 4).claims
        #expect(claims.count == 1024)
        return (leases, claims)
    }

    @Test("the fence before publishing looks each claim's row up by its primary key, the statistics taken before any lease")
    func fenceReadsRowsByKey() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let (leases, claims) = try claimedBatch(conn, host: "fence.test")
        #expect(try leases.held(claims).count == 1024)
        let plan = try plan(
            conn, Statements.TransferLeases.heldClaims, [array(claims.map { String($0.info.id) }, "bigint"), array(claims.map(\.leaseToken), "uuid")])
        #expect(plan.contains("Index Scan using transfers_pkey") && !plan.contains("Seq Scan on transfers"), "\(plan)")
    }

    @Test("the record of a batch's files and the renewal of its leases read the claims' rows by primary key, the statistics taken before any lease")
    func recordAndRenewReadRowsByKey() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        let (leases, claims) = try claimedBatch(conn, host: "record.test")
        let ids = array(claims.map { String($0.info.id) }, "bigint")
        let tokens = array(claims.map(\.leaseToken), "uuid")
        let texts = array(Array(repeating: "x", count: claims.count), "text")
        let sizes = array(Array(repeating: "4096", count: claims.count), "bigint")
        let flags = array(Array(repeating: "false", count: claims.count), "bool")
        let record = try plan(
            conn, TransferLeases.recordProbed,
            [
                ids, tokens, texts, sizes, texts, texts, texts, flags, texts, flags, texts, texts, "'worker-a'", "'note'",
                array(Array(repeating: "0", count: claims.count), "int"),
            ])
        #expect(record.contains("Index Scan using transfers_pkey on transfers t") && !record.contains("Seq Scan on transfers"), "\(record)")
        let renew = try plan(conn, TransferLeases.renewClaims, [ids, tokens, "30"])
        #expect(renew.contains("Index Scan using transfers_pkey on transfers t") && !renew.contains("Seq Scan on transfers"), "\(renew)")
        #expect(try leases.renew(claims, lease: 30).count == 1024)
    }

    /// A table of 3000 transfers of `host`, analyzed while pending and then done: with
    /// validators, `options`, and the destination of each.
    private func doneTransfers(_ conn: PostgresConnection, host: String, options: String) throws {
        _ = try conn.query(
            """
            INSERT INTO transfers (url, host, dest, segment_size, options)
            SELECT 'http://\(host)/f-' || g, '\(host)', 'f-' || g, 4194304, '\(options)'::jsonb FROM generate_series(1, 3000) g
            """)
        _ = try conn.query("ANALYZE transfers")
        _ = try conn.query("UPDATE transfers SET state = 'done', size = 4096, etag = '\"e\"', finished_at = now()")
    }

    @Test("an earlier version of a claim with a destination is looked up by destination and URL, the statistics taken before any was done")
    func previousVersionsByKey() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        try doneTransfers(conn, host: "again.test", options: "{}")
        let names = (1...1024).map { "f-\($0)" }
        let plan = try plan(
            conn, Statements.TransferLeases.previousVersions,
            [
                array((1...1024).map { String(-$0) }, "bigint"), array(names.map { "http://again.test/\($0)" }, "text"), array(names, "text"),
                "NULL::text[]",
            ])
        #expect(plan.contains("Index Scan using transfers_previous on transfers t") && !plan.contains("Hash"), "\(plan)")
    }

    @Test("an earlier version of a get the origin names is looked up by URL, the statistics taken before any was done")
    func previousNamedByOriginByKey() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        try doneTransfers(conn, host: "named.test", options: #"{"local_target": "/srv/"}"#)
        let plan = try plan(
            conn, Statements.TransferLeases.previousNamedByOrigin(earlier: TransferLeases.earlierGets),
            [
                array((1...1024).map { String(-$0) }, "bigint"), array((1...1024).map { "http://named.test/f-\($0)" }, "text"),
                array(Array(repeating: "/srv/", count: 1024), "text"),
            ])
        #expect(plan.contains("Index Scan using transfers_local_target on transfers t") && !plan.contains("Hash"), "\(plan)")
    }

    @Test("an earlier version of a fleet transfer the origin names is looked up by URL, the statistics taken before any was done")
    func previousFleetNameByKey() throws {
        let database = try TestDatabase()
        let conn = try PostgresConnection(conninfo: database.url)
        try doneTransfers(conn, host: "fleet.test", options: #"{"named_by_origin": true}"#)
        let plan = try plan(
            conn, Statements.TransferLeases.previousNamedByOrigin(earlier: TransferLeases.earlierFleetNames),
            [
                array((1...1024).map { String(-$0) }, "bigint"), array((1...1024).map { "http://fleet.test/f-\($0)" }, "text"),
                "NULL::text[]",
            ])
        #expect(plan.contains("Index Scan using transfers_named_by_origin on transfers t") && !plan.contains("Hash"), "\(plan)")
    }
}
