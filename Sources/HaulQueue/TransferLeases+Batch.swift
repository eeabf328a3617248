import HaulCore
import HaulPostgres

/// The batch probe's side of the protocol: many planning leases renewed and finished per
/// statement, so a small file costs a fraction of a round trip instead of several.
extension TransferLeases {
    /// Renews the planning leases of `claims` in one statement.
    /// - Returns: the ids whose lease this worker still holds.
    public func renew(_ claims: [Claim], lease: Double) throws -> Set<Int64> {
        guard !claims.isEmpty else { return [] }
        let rows = try db.query(
            """
            UPDATE transfers t SET lease_expires_at = now() + make_interval(secs => $3)
            FROM unnest($1::bigint[], $2::uuid[]) AS c(id, token)
            WHERE t.id = c.id AND t.lease_token = c.token AND t.state = 'planning'
            RETURNING t.id
            """, [claims.map { $0.info.id }, claims.map { $0.leaseToken }, lease]
        ).rows
        return Set(try rows.map { try $0.int64("id") })
    }

    /// Gives back the host slots of `claims` once their requests have all ended, so that other
    /// lanes may open connections to the host while this batch syncs, publishes and records.
    /// Only the rows holding a slot are written (the others' rows stay untouched), each fenced by
    /// its lease; a lost lease was released by whoever took the transfer over. The commit does not
    /// wait for the WAL flush, so the host row is not locked through it: a release a server crash
    /// loses is harmless (the rows are planning under a lease that will expire and be rescued).
    public func releaseSlots(_ claims: [Claim]) throws {
        guard !claims.isEmpty else { return }
        try db.queryWithoutDurableCommit(
            """
            UPDATE transfers t SET holds_slot = false
            FROM unnest($1::bigint[], $2::uuid[]) AS c(id, token)
            WHERE t.id = c.id AND t.lease_token = c.token AND t.state = 'planning' AND t.holds_slot
            """, [claims.map { $0.info.id }, claims.map { $0.leaseToken }])
    }

    /// The ids of `claims` whose planning lease this worker still holds (a read: the fence
    /// before publishing, when the batch renewed its leases a third of a lease ago at most).
    public func held(_ claims: [Claim]) throws -> Set<Int64> {
        guard !claims.isEmpty else { return [] }
        let rows = try db.query(
            """
            SELECT t.id FROM transfers t JOIN unnest($1::bigint[], $2::uuid[]) AS c(id, token) ON t.id = c.id
            WHERE t.lease_token = c.token AND t.state = 'planning' AND t.lease_expires_at > now()
            """, [claims.map { $0.info.id }, claims.map { $0.leaseToken }]
        ).rows
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

    /// Marks probed files done in one transaction, with a done segment row for each file that
    /// was fetched, fenced by each planning lease. A file the origin names and answered `304`
    /// for takes the name of the version kept (`PreviousVersion.dest`).
    /// - Returns: the ids finished; the others' leases were lost (cancelled, or taken over).
    public func finish(probed files: [ProbedFile]) throws -> Set<Int64> {
        guard !files.isEmpty else { return [] }
        return try db.transaction(awaitDurableCommit: true) {
            let finished = try db.query(
                """
                UPDATE transfers t SET state = 'done', dest = f.dest, options = \(Self.namingOrigin("t.")), size = f.size, etag = f.etag, last_modified = f.last_modified,
                       content_type = coalesce(f.content_type, t.content_type), accepts_ranges = CASE WHEN f.unchanged THEN t.accepts_ranges ELSE f.accepts_ranges END,
                       computed_digest = coalesce(f.digest, t.computed_digest), unchanged = f.unchanged, error = NULL, error_code = NULL,
                       storage = coalesce(f.storage, t.storage), layout = coalesce(f.layout, t.layout),
                       lease_token = NULL, lease_expires_at = NULL, published_at = now(), finished_at = now(), updated_at = now()
                FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::text[], $10::bool[], $11::text[], $12::text[])
                     AS f(id, token, dest, size, etag, last_modified, content_type, accepts_ranges, digest, unchanged, storage, layout)
                WHERE t.id = f.id AND t.lease_token = f.token AND t.state = 'planning'
                RETURNING t.id
                """,
                [
                    files.map { $0.claim.info.id }, files.map { $0.claim.leaseToken }, files.map { $0.plan.dest }, files.map { $0.plan.size },
                    files.map { $0.plan.etag }, files.map { $0.plan.lastModified }, files.map { $0.plan.contentType }, files.map { $0.plan.acceptsRanges },
                    files.map { $0.digest }, files.map { $0.unchanged }, files.map { $0.plan.storage }, files.map { $0.plan.layout?.rawValue },
                ]
            ).rows
            let ids = Set(try finished.map { try $0.int64("id") })
            if !ids.isEmpty { try db.query("NOTIFY \(TransferStore.finishedChannel)") }
            let fetched = files.filter { ids.contains($0.claim.info.id) && !$0.unchanged && !$0.plan.ranges.isEmpty }
            if !fetched.isEmpty {
                try db.query(
                    """
                    INSERT INTO segments (transfer_id, generation, idx, byte_offset, length, bytes_done, priority, host, state, worker_id, attempts)
                    SELECT f.id, f.generation, 0, 0, f.length, f.length, f.priority, f.host, 'done', $6, 1
                    FROM unnest($1::bigint[], $2::int[], $3::bigint[], $4::int[], $5::text[]) AS f(id, generation, length, priority, host)
                    """,
                    [
                        fetched.map { $0.claim.info.id }, fetched.map { $0.claim.generation }, fetched.map { $0.plan.ranges[0].length },
                        fetched.map { $0.claim.info.priority }, fetched.map { $0.plan.host }, workerID,
                    ])
            }
            return ids
        }
    }
}
