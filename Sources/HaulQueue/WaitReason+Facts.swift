import HaulCore
import HaulPostgres

extension WaitReason {
    /// Why each of transfers `ids` waits, by id; transfers that run, are finished or are
    /// between two steps are left out.
    public static func of(_ db: PostgresConnection, transfers ids: [Int64]) throws -> [Int64: WaitReason] {
        try facts(db, transfers: ids).compactMapValues(decide)
    }

    /// The facts `decide` needs about transfers `ids` and the fleet, by transfer id.
    public static func facts(_ db: PostgresConnection, transfers ids: [Int64]) throws -> [Int64: Facts] {
        guard !ids.isEmpty else { return [:] }
        let warning = try WorkerRegistry(db).noLiveWorkerWarning()
        let fleet = try db.query(
            """
            SELECT (SELECT count(*) FROM workers WHERE stopped_at IS NULL AND heartbeat_at > now() - make_interval(secs => $1)) AS alive,
                   (SELECT count(*) FROM segments WHERE state = 'running') AS running
            """, [WorkerRegistry.deadAfter]
        ).first
        let alive = try fleet?.int("alive") ?? 0
        let fleetRunning = try fleet?.int("running") ?? 0
        var facts: [Int64: Facts] = [:]
        for row in try db.query(
            """
            SELECT t.id, t.state, t.host, coalesce(h.busy, 0) AS host_running, coalesce(h.max_running, d.max_running, $2) AS host_limit,
                   (SELECT count(*) FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state = 'running')
                     + CASE WHEN \(TransferLeases.claimedSQL("t.")) THEN 1 ELSE 0 END AS running,
                   CASE WHEN t.state = 'pending' THEN t.next_attempt_at <= now()
                        ELSE EXISTS (SELECT 1 FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation
                                     AND s.state = 'queued' AND s.next_attempt_at <= now()) END AS due,
                   to_char(CASE WHEN t.state = 'pending' THEN t.next_attempt_at ELSE w.at END AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"') AS backoff_until,
                   CASE WHEN t.state = 'pending' THEN t.error ELSE w.error END AS backoff_reason
            FROM transfers t LEFT JOIN origin_hosts h ON h.host = t.host LEFT JOIN origin_hosts d ON d.host = '*'
            LEFT JOIN LATERAL (
                SELECT s.next_attempt_at AS at, s.last_error AS error FROM segments s
                WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state = 'queued' AND s.next_attempt_at > now()
                ORDER BY s.next_attempt_at LIMIT 1
            ) w ON true
            WHERE t.id = ANY($1::bigint[])
            """, [ids, HostLimits.fallbackDefault]
        ).rows {
            let id = try row.int64("id")
            facts[id] = Facts(
                id: id, state: TransferState(rawValue: try row.string("state")) ?? .failed, running: try row.int("running"), due: try row.bool("due"),
                backoffUntil: row["backoff_until"], backoffReason: row["backoff_reason"].map(SafeText.cleanLine), host: try row.string("host"),
                hostRunning: try row.int("host_running"), hostLimit: try row.int("host_limit"), noLiveWorker: warning, liveWorkers: alive,
                fleetRunning: fleetRunning)
        }
        return facts
    }
}
