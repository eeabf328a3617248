import HaulCore
import HaulPostgres

/// Named groups of transfers (batch mirror jobs): bulk enqueue and progress by batch.
public struct Batches {
    let db: PostgresConnection

    /// Works through `connection`, which the caller owns.
    public init(_ connection: PostgresConnection) {
        self.db = connection
    }

    /// An entry whose destination an active transfer outside this batch (or of another URL) already writes.
    public struct Busy: Sendable {
        /// The entry's index in the array given to `enqueue`.
        public let index: Int
        /// The `destination-busy` refusal, naming the transfer.
        public let error: HaulError
    }

    /// Inserts all `entries` under batch `name` in one transaction, with array parameters
    /// (a few statements for 100 000 lines, not a round trip per line). Entries already in the
    /// batch (same URL and destination) are left alone, and an entry given more than once is
    /// inserted once. Entries whose destination an active
    /// transfer already writes are returned as `busy`: with `skipBusy` the others are inserted,
    /// without it nothing is.
    /// - Returns: the batch's id (`nil` when nothing was inserted because of busy entries), how many were new, the busy entries.
    public func enqueue(_ entries: [NewTransfer], batch name: String, skipBusy: Bool = false) throws -> (
        batchID: Int64?, inserted: Int, busy: [Busy]
    ) {
        try db.transaction {
            try TransferStore.lockDestinations(db)
            let busy = try busyEntries(entries, batch: name)
            if !busy.isEmpty && !skipBusy { return (nil, 0, busy) }
            let skipped = Set(busy.map(\.index))
            let free = skipped.isEmpty ? entries : entries.enumerated().filter { !skipped.contains($0.offset) }.map(\.element)
            // `xmax = 0`: the row is this statement's insert, not the update of an existing batch.
            let batch = try db.query(
                Statements.Batches.createBatch,
                [name]
            ).first!
            let batchID = try batch.int64("id")
            let created = try batch.bool("created")
            let entries = Self.firstOfEach(free)
            let hostKeys = OriginURL.hostKeys(entries.map(\.url))
            let hosts = Array(Set(hostKeys))
            try db.query(Statements.Batches.addHosts, [hosts])
            let inserted = created ? try copy(entries, hostKeys: hostKeys, batchID: batchID) : try add(entries, hostKeys: hostKeys, batchID: batchID)
            try TransferStore.recordBatchMirrors(entries.filter { !$0.mirrors.isEmpty }, batchID: batchID, db)
            analyzeNewRows(inserted)
            try db.query("NOTIFY haul_work")
            return (batchID, inserted, busy)
        }
    }

    /// Loads the entries of a batch this enqueue created with one `COPY` (`firstOfEach` dropped
    /// the repeats, and the batch holds no rows yet: nothing can collide).
    /// - Returns: how many rows were loaded.
    private func copy(_ entries: [NewTransfer], hostKeys: [String], batchID: Int64) throws -> Int {
        let headers = Self.encodeRuns(entries.map(\.headers), Header.json)
        let options = Self.encodeRuns(entries.map(\.options), \.json)
        var rows = CopyRows(capacity: entries.count * 160)
        let batch = String(batchID)
        for (index, entry) in entries.enumerated() {
            rows.append([
                entry.url, hostKeys[index], entry.dest ?? "", String(entry.segmentSize), entry.checksum?.description, String(entry.priority),
                entry.layout.rawValue, headers[index], options[index], batch,
            ])
        }
        return try db.copy(into: "transfers (url, host, dest, segment_size, expected_digest, priority, layout, headers, options, batch_id)", rows)
    }

    /// Inserts entries into a batch that exists already, skipping those it holds (same URL and
    /// destination), a chunk of `rowsPerInsert` per statement.
    /// - Returns: how many rows were new.
    private func add(_ entries: [NewTransfer], hostKeys: [String], batchID: Int64) throws -> Int {
        var inserted = 0
        var start = 0
        while start < entries.count {
            let range = start..<min(entries.count, start + Self.rowsPerInsert)
            let chunk = entries[range]
            inserted += try db.query(
                Statements.Batches.insertEntries,
                [
                    chunk.map(\.url), chunk.map { $0.dest ?? "" }, chunk.map(\.segmentSize), chunk.map { $0.checksum?.description },
                    chunk.map(\.priority), chunk.map(\.layout.rawValue), Self.encodeRuns(chunk.map(\.headers), Header.json),
                    Self.encodeRuns(chunk.map(\.options), \.json), batchID,
                    Array(hostKeys[range]),
                ]
            ).affectedRows
            start += chunk.count
        }
        return inserted
    }

    /// `entries` without the repeats of an entry (same URL and destination), the first of each
    /// kept: a batch holds each entry once. Neither way of adding rows would drop them: `COPY`
    /// (a batch this enqueue created, which holds no rows yet) checks nothing, and the `NOT
    /// EXISTS` of `insertEntries` reads the rows as they were before its statement.
    /// Without a repeat (a manifest's parser refuses them) the array is returned as it is, not copied.
    static func firstOfEach(_ entries: [NewTransfer]) -> [NewTransfer] {
        var seen = Set<EntryKey>(minimumCapacity: entries.count)
        let first = entries.map { seen.insert(EntryKey(url: ExactText($0.url), dest: ExactText($0.dest ?? ""))).inserted }
        guard first.contains(false) else { return entries }
        return zip(entries, first).filter(\.1).map(\.0)
    }

    /// What makes an entry the same as another in one batch: the key of `transfers_batch_entry`,
    /// compared by bytes as the index compares it.
    private struct EntryKey: Hashable {
        let url: ExactText
        let dest: ExactText
    }

    /// Rows a bulk insert of transfers writes per statement (a manifest's, a `haul get` list's):
    /// its array parameters stay well within what one message carries.
    static let rowsPerInsert = 20_000

    /// Bulk inserts of at least this many rows refresh the planner's statistics at once…
    static let analyzeAfter = 1000

    /// …when they add at least this share of the rows the statistics last counted.
    static let analyzeShare = 0.1

    /// Whether a bulk insert of `inserted` rows refreshes the statistics of `transfers`, which
    /// last counted `counted` rows (`pg_class.reltuples`; negative: never analyzed). A table the
    /// statistics already know as ten times the batch is planned right without it: its pending
    /// rows are a sliver, read through their partial index either way, and the lease and owner
    /// columns' null shares do not move. There the sample cost more the bigger the fleet's
    /// history: its 3 000 rows come from as many pages of the table. On 1 000 000 finished
    /// transfers it took 63 ms of a 2000-file batch's statement time, half the batch's insert
    /// (18 ms on a fresh table; `bench/ab-small.sh`, AB_STATEMENTS). Autovacuum analyzes at the
    /// same share (10 % + 50 rows).
    static func analyzes(inserted: Int, counted: Double) -> Bool {
        inserted >= analyzeAfter && (counted < 0 || Double(inserted) >= counted * analyzeShare)
    }

    /// Refreshes the planner's statistics of `transfers` in the enqueue's transaction, so that
    /// they arrive with the rows, when `inserted` new rows call for it (`analyzes`). A worker's
    /// claims run one plan per connection, made on the
    /// table as it was at its first claim (empty, on a new cluster): with the rows but not the
    /// statistics, the claims of the eight lanes the enqueue woke each sorted every pending row
    /// (11–39 ms where an index scan reads a few; `auto_explain`). The statistics' commit
    /// replaces those plans before the workers' first claim.
    ///
    /// Every column the claims filter and sort on, the lease and owner columns included: without
    /// their statistics PostgreSQL guesses that 1 row in 200 passes `lease_token IS NULL` and
    /// sorts all the host's pending rows instead of reading the first few in index order. Not
    /// the long url and dest columns, which would cost most of the work; from a sample of 3 000
    /// rows rather than 30 000. Best effort, in a savepoint: a role that does not own the table
    /// cannot ANALYZE it, and an autovacuum of the table (which holds the lock ANALYZE needs)
    /// must not hold up the enqueue's commit for more than a moment.
    func analyzeNewRows(_ inserted: Int) {
        guard inserted >= Self.analyzeAfter else { return }
        do {
            try db.query("SAVEPOINT haul_analyze")
            let counted =
                try db.query("SELECT reltuples::float8::text AS n FROM pg_class WHERE oid = 'transfers'::regclass").first
                .flatMap { Double(try $0.string("n")) } ?? -1
            if Self.analyzes(inserted: inserted, counted: counted) {
                try db.query("SET LOCAL default_statistics_target = 10")
                try db.query("SET LOCAL lock_timeout = '200ms'")
                try db.query("ANALYZE transfers (state, host, priority, next_attempt_at, lease_token, lease_expires_at, owner, batch_id)")
                try db.query("SET LOCAL lock_timeout TO DEFAULT")
            }
            try db.query("RELEASE SAVEPOINT haul_analyze")
        } catch {
            _ = try? db.query("ROLLBACK TO SAVEPOINT haul_analyze")
        }
    }

    /// `encode` of each value, computed once per run of equal values: a manifest's lines mostly
    /// share the command line's options and headers, and a JSON encoder is slow to start.
    static func encodeRuns<Value: Equatable>(_ values: [Value], _ encode: (Value) -> String) -> [String] {
        var previous: (value: Value, text: String)?
        return values.map { value in
            if let previous, previous.value == value { return previous.text }
            let text = encode(value)
            previous = (value, text)
            return text
        }
    }

    /// Entries whose destination an active transfer already writes, unless it is the same URL in the same batch.
    private func busyEntries(_ entries: [NewTransfer], batch name: String) throws -> [Busy] {
        let rows = try db.query(
            Statements.Batches.busyEntries, [entries.map(\.url), entries.map { $0.dest ?? "" }, TransferStore.activeStates, name]
        ).rows
        return try rows.map { row in
            Busy(
                index: Int(try row.int64("i")) - 1,
                error: TransferStore.busy(try row.string("d"), id: try row.int64("id"), state: try row.string("state")))
        }
    }

    /// Counts and bytes of a batch's transfers.
    public struct Summary: Sendable {
        public let name: String
        public let countsByState: [TransferState: Int]
        public let total: Int
        public let bytesDone: Int64
        /// Sum of the known sizes of the files to fetch: transfers not yet planned add nothing,
        /// and neither do `unchanged` ones.
        public let bytesKnown: Int64
        /// Done transfers the origin answered `304 Not Modified` for: their files were kept
        /// whole and nothing was fetched.
        public let unchanged: Int
        /// Bytes per second over the time any of the batch's transfers ran (`busySeconds`): the
        /// hours between a batch's night and the retry of its failures the next day do not count.
        public let rate: Double?
        /// Failed transfers' ids and reasons (at most 20).
        public let failures: [(id: Int64, error: String)]

        /// Whether every transfer is done, failed or canceled.
        public var isFinished: Bool { countsByState.filter { !$0.key.isFinal }.values.reduce(0, +) == 0 }
    }

    /// Whether batch `name` still has a transfer that is not done, failed or canceled, or `nil` if
    /// there is no such batch. One cheap statement (it stops at the first such transfer), for
    /// waiting on a batch with short polls; `summary` is the full account.
    public func hasUnfinished(_ name: String) throws -> Bool? {
        try db.query(
            Statements.Batches.hasUnfinished, [name, TransferStore.activeStates]
        ).first.map { try $0.bool("open") }
    }

    /// The summary of batch `name`, or `nil` if there is no such batch. One scan of the batch's
    /// rows: a file done (not kept by a `304`) counts its size, others their segments' bytes; a
    /// file kept by a `304` is counted apart, its size in neither. A second reads how long the
    /// batch was busy, for its rate.
    public func summary(_ name: String) throws -> Summary? {
        guard let batch = try db.query(Statements.Batches.batchID, [name]).first else { return nil }
        let id = try batch.int64("id")
        let groups = try db.query(
            Statements.Batches.summaryGroups, [id]
        ).rows
        var counts: [TransferState: Int] = [:]
        var known: Int64 = 0
        var done: Int64 = 0
        var unchanged = 0
        for row in groups {
            if let state = TransferState(rawValue: try row.string("state")) { counts[state] = try row.int("n") }
            known += try row.int64("known")
            unchanged += try row.int("unchanged")
            done += try row.int64("done")
        }
        let seconds = try busySeconds(id)
        let failures =
            counts[.failed, default: 0] == 0
            ? []
            : try db.query(
                Statements.Batches.failures, [id]
            )
            .rows.map { (try $0.int64("id"), SafeText.cleanLine(try $0.string("error"))) }
        return Summary(
            name: name, countsByState: counts, total: counts.values.reduce(0, +), bytesDone: done, bytesKnown: known, unchanged: unchanged,
            rate: seconds.flatMap { $0 > 0 ? Double(done) / $0 : nil }, failures: failures)
    }

    /// Seconds during which at least one transfer of batch `id` ran: the union of its transfers'
    /// current runs (from their start, or their last retry or resume, to their end; a paused
    /// one's to its pause; an unfinished one's to now). `nil` before any started.
    private func busySeconds(_ id: Int64) throws -> Double? {
        try db.query(
            Statements.Batches.busySeconds, [id]
        ).first.flatMap { try $0.optionalDouble("busy") }
    }
}
