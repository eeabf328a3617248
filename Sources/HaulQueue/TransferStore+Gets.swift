import HaulCore
import HaulPostgres

/// `haul get`'s side of the queue: a list of URLs is looked up and recorded a few statements
/// at a time, not a few per URL (a thousand URLs took most of a second, one by one).
extension TransferStore {
    /// For each `(url, localTarget)`, the newest unfinished transfer that `haul get` started
    /// for the same URL and local file, in the order given.
    public func unfinishedGets(_ wanted: [(url: String, localTarget: String)]) throws -> [Int64?] {
        guard !wanted.isEmpty else { return [] }
        let rows = try db.query(
            Statements.TransferStore.unfinishedGets,
            [wanted.map(\.url), wanted.map(\.localTarget)]
        ).rows
        return try rows.map { try $0.optionalInt64("id") }
    }

    /// Inserts pending transfers that a `haul get` owns (each request names its `owner`), one
    /// statement per `Batches.rowsPerInsert`. Nobody is notified (the owner's worker alone takes
    /// them on), and no destination is checked for another transfer's use (the get has checked
    /// its own files).
    /// - Returns: their ids, in the order of `requests`.
    public func enqueueOwned(_ requests: [NewTransfer]) throws -> [Int64] {
        precondition(requests.allSatisfy { $0.owner != nil }, "a get's transfers are owned by its worker")
        guard !requests.isEmpty else { return [] }
        let hosts = OriginURL.hostKeys(requests.map(\.url))
        try db.query(Statements.TransferStore.addOriginHosts, [hosts])
        var ids: [Int64] = []
        ids.reserveCapacity(requests.count)
        var start = 0
        while start < requests.count {
            let range = start..<min(requests.count, start + Batches.rowsPerInsert)
            let chunk = requests[range]
            // Rows are inserted, and returned, in the order the ordered select gives them.
            let rows = try db.query(
                Statements.TransferStore.enqueueOwned,
                [
                    chunk.map(\.url), chunk.map(\.dest), chunk.map(\.segmentSize), chunk.map { $0.checksum?.description }, chunk.map(\.priority),
                    chunk.map(\.layout.rawValue), Batches.encodeRuns(chunk.map(\.headers), Header.json), Batches.encodeRuns(chunk.map(\.options), \.json),
                    chunk.map(\.owner), Array(hosts[range]),
                ]
            ).rows
            ids += try rows.map { try $0.int64("id") }
            start = range.upperBound
        }
        guard ids.count == requests.count else { throw HaulError(.database, "recorded \(ids.count) of \(requests.count) transfers") }
        for (id, request) in zip(ids, requests) { try Self.recordMirrors(id, request, db) }
        Batches(db).analyzeNewRows(ids.count)
        return ids
    }
}
