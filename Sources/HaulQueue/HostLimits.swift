import HaulCore
import HaulPostgres

/// Cluster-wide limits on running segments per origin host (docs/ARCHITECTURE.md "Claim, lease, fence").
///
/// Counting running rows without a lock races: two claimers would both see the last free
/// slot. So a claim first locks the host's row in `origin_hosts` (`FOR UPDATE SKIP LOCKED`),
/// then — in a later statement of the same transaction, whose snapshot sees every claim
/// committed before the lock was granted — counts that host's running segments and takes at
/// most the free slots. Claimers of one host take turns; other hosts' claimers do not wait.
public enum HostLimits {
    /// The default when no `'*'` row says otherwise.
    public static let fallbackDefault = 8

    /// A locked host row and its limit.
    public struct LockedHost: Sendable {
        public let name: String
        public let maxRunning: Int
    }

    /// Locks the row of the host whose queued work comes first (priority, then age), skipping
    /// hosts another claimer holds and those in `excluding`. Call inside a transaction.
    static func lockBusiestCandidate(_ db: PostgresConnection, worker: String, excluding: [String]) throws -> LockedHost? {
        try lockFirstHost(
            db, worker: worker, excluding: excluding,
            candidates: """
                SELECT s.host, s.priority, s.id FROM segments s
                JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation
                WHERE s.state = 'queued' AND s.next_attempt_at <= now() AND (t.owner IS NULL OR t.owner = $1) AND s.host <> ALL($2::text[])
                ORDER BY s.priority DESC, s.id LIMIT 500
                """)
    }

    /// Locks the row of the host whose pending transfer comes first, for the planner.
    static func lockPlanningCandidate(_ db: PostgresConnection, worker: String, excluding: [String]) throws -> LockedHost? {
        try lockFirstHost(
            db, worker: worker, excluding: excluding,
            candidates: """
                SELECT t.host, t.priority, t.id FROM transfers t
                WHERE t.state = 'pending' AND t.next_attempt_at <= now() AND (t.owner IS NULL OR t.owner = $1) AND t.host <> ALL($2::text[])
                ORDER BY t.priority DESC, t.id LIMIT 500
                """)
    }

    /// Locks the host row of the first of `candidates` (a query of host, priority, id that uses
    /// `$1` for the worker and `$2` for the hosts to skip), with its effective limit. A host row
    /// another claimer holds is skipped in favour of the next host; when every candidate host is
    /// held, it waits its turn for the first one (a claim holds it for a millisecond or two)
    /// rather than going idle while slots are free.
    private static func lockFirstHost(_ db: PostgresConnection, worker: String, excluding: [String], candidates: String) throws -> LockedHost? {
        for wait in [false, true] {
            let row = try db.query(
                """
                SELECT h.host, coalesce(h.max_running, (SELECT max_running FROM origin_hosts WHERE host = '*'), $3) AS max_running
                FROM (SELECT c.host, max(c.priority) AS priority, min(c.id) AS first FROM (\(candidates)) c GROUP BY c.host) candidates
                JOIN origin_hosts h ON h.host = candidates.host
                ORDER BY candidates.priority DESC, candidates.first
                LIMIT 1
                FOR UPDATE OF h \(wait ? "" : "SKIP LOCKED")
                """, [worker, excluding, fallbackDefault]
            ).first
            if let row { return LockedHost(name: try row.string("host"), maxRunning: try row.int("max_running")) }
        }
        return nil
    }

    /// Slots left on a host whose row this transaction has locked: its limit less its running
    /// segments and its probes (a probe is a connection too; a batch probe counts the
    /// connections it opens, not the transfers it holds).
    static func freeSlots(_ db: PostgresConnection, host: LockedHost) throws -> Int {
        let busy =
            try db.query(
                """
                SELECT (SELECT count(*) FROM segments WHERE state = 'running' AND host = $1)
                     + (SELECT count(*) FROM transfers WHERE state = 'planning' AND host = $1 AND holds_slot) AS n
                """, [host.name]
            ).first?.int("n") ?? 0
        return max(0, host.maxRunning - busy)
    }

    /// Sets a host's limit; `*` sets the default for hosts without one.
    public static func set(_ db: PostgresConnection, host: String, limit: Int) throws {
        try db.query(
            "INSERT INTO origin_hosts (host, max_running) VALUES ($1, $2) ON CONFLICT (host) DO UPDATE SET max_running = excluded.max_running",
            [host, limit])
    }

    /// Removes a host's own limit, so the default applies again (`*`: the default goes back to
    /// `fallbackDefault`). - Returns: whether the host had a limit of its own.
    @discardableResult
    public static func unset(_ db: PostgresConnection, host: String) throws -> Bool {
        try db.query("UPDATE origin_hosts SET max_running = NULL WHERE host = $1 AND max_running IS NOT NULL", [host]).affectedRows > 0
    }

    /// Every host with its limit (explicit or default) and its running segments now.
    public static func list(_ db: PostgresConnection) throws -> [(host: String, limit: Int, explicit: Bool, running: Int)] {
        try db.query(
            """
            SELECT h.host, coalesce(h.max_running, d.max_running, $1) AS max_running, h.max_running IS NOT NULL AS explicit,
                   (SELECT count(*) FROM segments s WHERE s.state = 'running' AND s.host = h.host)
                 + (SELECT count(*) FROM transfers t WHERE t.state = 'planning' AND t.host = h.host AND t.holds_slot) AS running
            FROM origin_hosts h LEFT JOIN origin_hosts d ON d.host = '*'
            ORDER BY h.host = '*' DESC, h.host
            """, [fallbackDefault]
        ).rows.map { (try $0.string("host"), try $0.int("max_running"), try $0.bool("explicit"), try $0.int("running")) }
    }
}
