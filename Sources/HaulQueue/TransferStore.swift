import HaulCore
import HaulPostgres

/// The admin side of the queue: enqueue, inspect and steer transfers. Never talks to origins.
public struct TransferStore {
    let db: PostgresConnection

    /// Works through `connection`, which the caller owns.
    public init(_ connection: PostgresConnection) {
        self.db = connection
    }

    /// Inserts a pending transfer and wakes idle workers.
    /// - Returns: the new transfer's id.
    public func enqueue(_ request: NewTransfer) throws -> Int64 {
        let host = OriginURL.hostKey(request.url)
        let row = try db.transaction {
            try db.query("INSERT INTO origin_hosts (host) VALUES ($1) ON CONFLICT DO NOTHING", [host])
            return try db.query(
                """
                INSERT INTO transfers (url, host, dest, segment_size, expected_digest, priority, layout, headers, options, batch_id, owner)
                VALUES ($1, $11, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9, $10)
                RETURNING id
                """,
                [
                    request.url, request.dest, request.segmentSize, request.checksum?.description, request.priority, request.layout,
                    Header.json(request.headers), request.options.json, request.batchID, request.owner, host,
                ]
            ).first
        }
        try db.query("NOTIFY haul_work")
        return try row!.int64("id")
    }

    /// Hands a transfer to a new owner (a rerun of `haul get` adopting its earlier, unfinished transfer).
    public func adopt(_ id: Int64, owner: String) throws {
        try db.query("UPDATE transfers SET owner = $2, lease_token = NULL, updated_at = now() WHERE id = $1", [id, owner])
        try db.query("UPDATE segments SET state = 'queued', lease_token = NULL WHERE transfer_id = $1 AND state = 'running'", [id])
    }

    /// The newest unfinished transfer of `url` that `haul get` started for the same local file.
    public func unfinishedGet(url: String, localTarget: String) throws -> Int64? {
        try db.query(
            "SELECT id FROM transfers WHERE url = $1 AND options->>'local_target' = $2 AND state NOT IN ('done','canceled') ORDER BY id DESC LIMIT 1",
            [url, localTarget]
        ).first?.int64("id")
    }

    /// One transfer with its progress, or `nil` if there is none with that id.
    public func status(_ id: Int64) throws -> TransferStatus? {
        try db.query(TransferStatus.selectSQL + " WHERE t.id = $1", [id]).first.map(TransferStatus.init)
    }

    /// Transfers, newest first, optionally only those in `state`.
    public func list(state: TransferState?, limit: Int = 1000) throws -> [TransferStatus] {
        try db.query(TransferStatus.selectSQL + " WHERE ($1::text IS NULL OR t.state = $1) ORDER BY t.id DESC LIMIT $2", [state?.rawValue, limit])
            .rows.map(TransferStatus.init)
    }

    /// The state of each segment of the transfer's current generation, in file order.
    public func segmentStates(_ id: Int64) throws -> [SegmentState] {
        try db.query(
            "SELECT s.state FROM segments s JOIN transfers t ON t.id = s.transfer_id AND t.generation = s.generation WHERE t.id = $1 ORDER BY s.byte_offset",
            [id]
        ).rows.compactMap { SegmentState(rawValue: try $0.string("state")) }
    }

    /// Applies an operator action, refusing transitions that `OperatorAction` does not allow.
    public func apply(_ action: OperatorAction, to id: Int64) throws {
        guard let current = try status(id) else {
            throw HaulError("no-such-transfer", "there is no transfer \(id)", hint: "'haul list' shows the transfers there are")
        }
        if let refusal = action.refusal(transfer: id, state: current.state) { throw refusal }
        let allowed = action.allowedFrom.map(\.rawValue)
        let updated: Int
        switch action {
        case .cancel:
            updated = try db.transaction {
                let count = try db.query(
                    "UPDATE transfers SET state = 'canceled', cleanup_pending = true, lease_token = NULL, finished_at = now(), updated_at = now(), error = NULL, error_code = NULL WHERE id = $1 AND state = ANY($2::text[])",
                    [id, allowed]
                ).affectedRows
                try db.query(
                    "UPDATE segments SET state = 'failed', last_error = 'canceled', lease_token = NULL, updated_at = now() WHERE transfer_id = $1 AND state IN ('queued','running')",
                    [id])
                return count
            }
        case .retry where current.state == .canceled || current.errorCode == "origin-changed" || current.layout == "s3":
            // Canceled: its partial data is (being) removed. Origin changed: its bytes are of an
            // older version. S3: its multipart upload is (being) aborted. Either way start over as
            // a new generation, whose files have other names than whatever a late cleanup still deletes.
            updated = try db.query(
                """
                UPDATE transfers SET state = 'pending', generation = generation + 1, restarts = 0, size = NULL, etag = NULL, last_modified = NULL,
                       accepts_ranges = NULL, published_at = NULL, extracted_at = NULL, upload_url = NULL, upload_result = NULL,
                       error = NULL, error_code = NULL, finished_at = NULL, lease_token = NULL, cleanup_pending = false, attempts = 0,
                       next_attempt_at = now(), updated_at = now()
                WHERE id = $1 AND state IN ('canceled', 'failed')
                """, [id]
            ).affectedRows
        case .retry:
            updated = try db.transaction {
                let count = try db.query(
                    """
                    UPDATE transfers SET state = CASE WHEN NOT EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = $1 AND s.generation = transfers.generation)
                                                      THEN (CASE WHEN size = 0 THEN 'finalizing' ELSE 'pending' END)
                                                      WHEN EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = $1 AND s.generation = transfers.generation AND s.state <> 'done') THEN 'downloading'
                                                      ELSE 'finalizing' END,
                        error = NULL, error_code = NULL, finished_at = NULL, lease_token = NULL, cleanup_pending = false, attempts = 0, next_attempt_at = now(), updated_at = now()
                    WHERE id = $1 AND state = 'failed'
                    """, [id]
                ).affectedRows
                try db.query(
                    """
                    UPDATE segments s SET state = 'queued', attempts = 0, next_attempt_at = now(), last_error = NULL, lease_token = NULL, updated_at = now()
                    FROM transfers t WHERE t.id = $1 AND s.transfer_id = t.id AND s.generation = t.generation AND s.state IN ('failed','running')
                    """, [id])
                return count
            }
        case .pause:
            updated = try db.query(
                "UPDATE transfers SET paused_from = state, state = 'paused', updated_at = now() WHERE id = $1 AND state = ANY($2::text[])", [id, allowed]
            ).affectedRows
        case .resume:
            updated = try db.query(
                "UPDATE transfers SET state = CASE WHEN paused_from = 'planning' THEN 'pending' ELSE coalesce(paused_from, 'pending') END, paused_from = NULL, lease_token = NULL, updated_at = now() WHERE id = $1 AND state = 'paused'",
                [id]
            ).affectedRows
        }
        guard updated == 1 else {
            throw HaulError(
                "conflict", "transfer \(id) changed state while \(action.rawValue) was being applied", hint: "look at 'haul status \(id)' and try again")
        }
        try db.query("NOTIFY haul_work")
    }
}
