import HaulCore
import HaulPostgres

/// The batch probe's side of the protocol: many planning leases renewed and finished per
/// statement, so a small file costs a fraction of a round trip instead of several.
extension TransferLeases {
    /// Renews the leases of `claims` in one statement: planning ones, and the small files a batch
    /// claim leased while leaving them `pending` (`restClaim`). This statement and the others
    /// of a batch compare the state as an expression (`t.state || ''`), which no index serves,
    /// and reach the batch's rows by the primary key (`amongClaims`). Compared as the column,
    /// the state led plans through `transfers_unfinished`, a hash of every unfinished row of the
    /// table for each statement. `held` looks its rows up one by one whatever the statistics say.
    /// - Returns: the ids whose lease this worker still holds.
    public func renew(_ claims: [Claim], lease: Double) throws -> Set<Int64> {
        guard !claims.isEmpty else { return [] }
        let rows = try db.query(Self.renewClaims, [claims.map { $0.info.id }, claims.map { $0.leaseToken }, lease]).rows
        return Set(try rows.map { try $0.int64("id") })
    }

    /// `renew(_:lease:)`'s statement: `$1` ids, `$2` their lease tokens, `$3` lease seconds.
    static let renewClaims = """
        UPDATE transfers t SET lease_expires_at = now() + make_interval(secs => $3)
        FROM unnest($1::bigint[], $2::uuid[]) AS c(id, token)
        WHERE \(amongClaims) AND t.id = c.id AND t.lease_token = c.token AND (t.state || '') IN ('pending','planning')
        RETURNING t.id
        """

    /// A condition that row `t` is one of the claims' ids (`$1`, bigint[]), in a shape whose
    /// length the planner does not see: an `UPDATE` of a batch's rows then reads them by primary
    /// key, whatever the statistics say. Joined only to the arrays, such a statement was planned
    /// from statistics taken when the rows were enqueued, and on a table of some five to sixty
    /// thousand rows read it whole for each batch: the record of 1024 files 33 ms on 50 000 rows,
    /// 11–13 ms by key (`EXPLAIN ANALYZE`, by hand). The join to the arrays still pairs each row
    /// with its own lease token, rechecked on the row's latest version.
    static let amongClaims = "t.id = ANY (ARRAY(SELECT unnest($1::bigint[])))"

    /// Gives back the host slots of `claims` once their requests have all ended, so that other
    /// lanes may open connections to the host while this batch syncs, publishes and records.
    /// Only the rows of the claims holding a slot are looked up and written (a batch of a
    /// thousand files holds a few; looking up all of them cost a thousand index probes per
    /// batch), each fenced by its lease; a lost lease was released by whoever took the transfer
    /// over. The commit does not wait for the WAL flush, so the host row is not locked through
    /// it: a release a server crash loses is harmless (the rows are planning under a lease that
    /// will expire and be rescued).
    public func releaseSlots(_ claims: [Claim]) throws {
        let holders = claims.filter(\.holdsSlot)
        guard !holders.isEmpty else { return }
        try db.queryWithoutDurableCommit(
            """
            UPDATE transfers t SET holds_slot = false
            FROM unnest($1::bigint[], $2::uuid[]) AS c(id, token)
            WHERE t.id = c.id AND t.lease_token = c.token AND (t.state || '') = 'planning' AND t.holds_slot
            """, [holders.map { $0.info.id }, holders.map { $0.leaseToken }])
    }

    /// The ids of `claims` whose planning lease this worker still holds (a read: the fence
    /// before publishing, when the batch renewed its leases a third of a lease ago at most).
    /// Each row is looked up by its primary key whatever the statistics say (`heldClaims.sql`):
    /// planned as a join, it took 0.3 s per batch of 1024 on a table of 15 000 rows, and 2 s
    /// with cold statistics, where it takes 2 ms (`EXPLAIN ANALYZE`, by hand).
    public func held(_ claims: [Claim]) throws -> Set<Int64> {
        guard !claims.isEmpty else { return [] }
        let rows = try db.query(Statements.TransferLeases.heldClaims, [claims.map { $0.info.id }, claims.map { $0.leaseToken }]).rows
        return Set(try rows.map { try $0.int64("id") })
    }

    /// A transfer its probe finished: a one-segment file fetched whole and published, or a
    /// file the origin answered `304 Not Modified` for.
    public struct ProbedFile: Sendable {
        public let claim: Claim
        /// What the probe learned (`plan.ranges` holds the one segment, none for an empty file).
        public let plan: Plan
        /// The digest computed while streaming (`algorithm:hex`); `nil` when unchanged.
        public let digest: String?
        /// The origin answered `304`: the file on storage is current and was not touched.
        public let unchanged: Bool

        public init(claim: Claim, plan: Plan, digest: String?, unchanged: Bool) {
            self.claim = claim
            self.plan = plan
            self.digest = digest
            self.unchanged = unchanged
        }
    }

    /// Marks probed files done in one transaction, fenced by each lease (a small file's claim
    /// leaves it `pending`, a slot holder's is `planning`): one statement for the batch, and one
    /// more for its host's bytes of the minute (`host_throughput`, the dashboard's figure).
    ///
    /// No `segments` row is written for a file that fit in its probe's response: its size is
    /// its bytes done. Nor is a history row written for a file that goes from `pending` to
    /// `done` (the row trigger leaves that change to this statement, migration 0030): the row's
    /// state and `finished_at` are that change, and its history shows it from there
    /// (`FleetView`'s `history`), a row fewer to write for each small file and to keep for the
    /// fleet's history. A slot holder's `planning` to `done` is the trigger's; a file canceled
    /// too late gets its `canceled` to `done` here. A file the origin names and answered `304`
    /// for takes the name of the version kept (`PreviousVersion.dest`).
    ///
    /// A file published after its fence whose transfer was canceled since (the cancel came in the
    /// moment between the fence and this record: its row is `canceled`, with no lease, still
    /// naming this worker and the generation fetched) stays in place: it is whole and verified,
    /// and removing it could remove a file a later transfer put at that name. Its transfer is
    /// recorded `done` with the note `canceledTooLate` rather than left `canceled` over a file
    /// that is there.
    /// - Returns: the ids finished; the others' leases were lost (taken over, or canceled before
    ///   the fence).
    public func finish(probed files: [ProbedFile]) throws -> Set<Int64> {
        guard !files.isEmpty else { return [] }
        return try db.transaction(awaitDurableCommit: true) {
            // A claim that holds a slot was moved to `planning` (its history row comes from the
            // trigger); the others were left `pending`.
            let finished = try db.query(
                Self.recordProbed,
                [
                    files.map { $0.claim.info.id }, files.map { $0.claim.leaseToken }, files.map { $0.plan.dest }, files.map { $0.plan.size },
                    files.map { $0.plan.etag }, files.map { $0.plan.lastModified }, files.map { $0.plan.contentType }, files.map { $0.plan.acceptsRanges },
                    files.map { $0.digest }, files.map { $0.unchanged }, files.map { $0.plan.storage }, files.map { $0.plan.layout?.rawValue }, workerID,
                    Self.canceledTooLate, files.map { $0.claim.generation },
                ]
            ).rows
            let ids = Set(try finished.map { try $0.int64("id") })
            guard !ids.isEmpty else { return ids }
            try db.query("NOTIFY \(TransferStore.finishedChannel)")
            let fetched = files.filter { ids.contains($0.claim.info.id) && !$0.unchanged }
            if let host = fetched.first?.plan.host {
                try db.query(
                    """
                    WITH old AS (DELETE FROM host_throughput WHERE host = $1 AND minute < now() - interval '24 hours')
                    INSERT INTO host_throughput (host, minute, bytes) VALUES ($1, date_trunc('minute', now()), $2)
                    ON CONFLICT (host, minute) DO UPDATE SET bytes = host_throughput.bytes + excluded.bytes
                    """, [host, fetched.reduce(Int64(0)) { $0 + ($1.plan.size ?? 0) }])
            }
            return ids
        }
    }

    /// `finish(probed:)`'s statement: `$1` ids, `$2` lease tokens, `$3`–`$12` what each probe
    /// learned, `$13` this worker, `$14` the note `canceledTooLate`, `$15` the generations fetched.
    static let recordProbed = """
        WITH done AS (
            UPDATE transfers t SET state = 'done', dest = f.dest, options = \(Self.namingOrigin("t.")), size = f.size, etag = f.etag, last_modified = f.last_modified,
                   content_type = coalesce(f.content_type, t.content_type), accepts_ranges = CASE WHEN f.unchanged THEN t.accepts_ranges ELSE f.accepts_ranges END,
                   computed_digest = coalesce(f.digest, t.computed_digest), unchanged = f.unchanged, error_code = NULL,
                   error = CASE WHEN t.state = 'canceled' THEN $14 END, cleanup_pending = false, worker_id = $13,
                   storage = coalesce(f.storage, t.storage), layout = coalesce(f.layout, t.layout),
                   lease_token = NULL, lease_expires_at = NULL, published_at = now(), finished_at = now(), updated_at = now()
            FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::text[], $10::bool[], $11::text[], $12::text[], $15::int[])
                 AS f(id, token, dest, size, etag, last_modified, content_type, accepts_ranges, digest, unchanged, storage, layout, generation)
            WHERE \(amongClaims) AND t.id = f.id
              AND ((t.lease_token = f.token AND (t.state || '') IN ('pending','planning'))
                   OR ((t.state || '') = 'canceled' AND t.lease_token IS NULL AND t.worker_id = $13 AND t.generation = f.generation AND NOT f.unchanged))
            RETURNING t.id, t.error),
        history AS (
            INSERT INTO transfer_events (transfer_id, from_state, to_state, error)
            SELECT id, 'canceled', 'done', error FROM done WHERE error IS NOT NULL)
        SELECT id FROM done
        """

    /// The note of a transfer canceled while its file was being published (`finish(probed:)`).
    public static let canceledTooLate = "canceled too late: the file was already published when the cancel arrived, and was kept"
}
