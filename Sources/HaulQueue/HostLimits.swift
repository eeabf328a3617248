import HaulCore
import HaulPostgres

/// Cluster-wide limits on running segments per origin host (docs/ARCHITECTURE.md "Claim, lease, fence").
///
/// Each host's row in `origin_hosts` holds its limit and `busy`, the slots in use now: its
/// running segments and its probes. Row triggers (migration 0010) keep `busy` in the very
/// statement that moves a segment or probe into or out of a slot, whatever the path. A claim
/// locks the host row (`FOR UPDATE`), and PostgreSQL re-reads a row that changed since the
/// statement's snapshot and tests `busy < limit` again on that version before granting it, so
/// two claimers never both take the last slot; the claim's own rows bump `busy` before the lock
/// is released at commit. A claimer that finds the row held by another skips it (it never
/// waits) and looks again shortly; other hosts' claimers are not concerned.
public enum HostLimits {
    /// The default when no `'*'` row says otherwise.
    public static let fallbackDefault = 8

    /// Candidate segments for `hostWithRoom` (host, priority, id) of the transfers `scope`
    /// takes on, on the storage in parameter `storage`; `worker` is the parameter holding the
    /// worker id. With `idleTransfersFrom` (a priority, an expression), only of transfers that
    /// have no running segment (`SegmentLeases.idleTransfer`), of that priority or higher.
    static func segmentCandidates(worker: String, scope: WorkScope, storage: String, idleTransfersFrom: String? = nil) -> String {
        """
        SELECT s.host, s.priority, s.id FROM segments s
        JOIN transfers t ON t.id = s.transfer_id AND t.state = 'downloading' AND t.generation = s.generation
        WHERE s.state = 'queued' AND s.next_attempt_at <= now() AND \(scope.owns("t.owner", worker: worker))
          AND \(WorkScope.onStorage("t.storage", storage: storage))\(idleTransfersFrom.map { " AND " + SegmentLeases.idleTransfer(from: $0) } ?? "")
        ORDER BY s.priority DESC, s.id LIMIT 500
        """
    }

    /// Candidate pending transfers for the planner, in the same shape: the small files a batch
    /// claim holds (`TransferLeases.claimedSQL`) are read past.
    static func planningCandidates(worker: String, scope: WorkScope) -> String {
        """
        SELECT t.host, t.priority, t.id FROM transfers t
        WHERE t.state = 'pending' AND t.next_attempt_at <= now() AND \(scope.owns("t.owner", worker: worker)) AND \(TransferLeases.unleasedSQL("t."))
        ORDER BY t.priority DESC, t.id LIMIT 500
        """
    }

    /// A query of `host`: the host of the first candidate (priority, then age) whose host has a
    /// free slot as the statement's snapshot sees it. Locks nothing and reads the candidates in
    /// index order only until it finds one, so it costs one index probe on a host with headroom.
    ///
    /// When no host has a free slot (one origin at its limit: a mirror of one site) the
    /// candidates are not read at all. Without that gate each such claim read up to 500 of them
    /// to find none (0.5–1.2 ms of the server's CPU; 0.1 ms with it), and while a big batch of
    /// one origin runs most claims are such: every slot given back, every batch that leaves
    /// files pending, wakes an idle lane, which asks for a batch and for segments.
    /// - Parameter idleFrom: a priority (an expression): only a host that holds no slot at all,
    ///   and a candidate of that priority or higher (a lane that gave its segment back to such a
    ///   host's waiting work, `FairShare`, must not take its own host's instead, nor a lane that
    ///   looks there first work of a lower priority than it had); `nil`: any host with room.
    static func hostWithRoom(candidates: String, defaultLimit: String, idleFrom: String? = nil) -> String {
        "SELECT c.host " + withRoom(candidates: candidates, defaultLimit: defaultLimit, idleFrom: idleFrom)
    }

    /// The CTEs that choose a claim's host, ending with `host` (`host, free`, its row locked),
    /// after `candidate` (`hostWithRoom`, unlocked): the candidate's host when its row is free
    /// (`lockedSlots`), else the first other host with room whose row no other claimer holds
    /// (`lockedHostWithRoom`). Claimers of a fleet meet on the host of the oldest work; the
    /// second takes the next host with room rather than nothing. The candidates are read a
    /// second time only then: a claim that finds no candidate (an idle lane's, while batches
    /// hold every pending row) reads them once, as one on a free host does.
    static func claimHost(candidates: String, defaultLimit: String, idleFrom: String?) -> String {
        """
        candidate AS MATERIALIZED (\(hostWithRoom(candidates: candidates, defaultLimit: defaultLimit, idleFrom: idleFrom))),
        first_host AS MATERIALIZED (\(lockedSlots(host: "(SELECT host FROM candidate)", defaultLimit: defaultLimit))),
        next_host AS MATERIALIZED (\(lockedHostWithRoom(candidates: candidates, defaultLimit: defaultLimit, idleFrom: idleFrom))),
        host AS MATERIALIZED (
            SELECT * FROM first_host
            UNION ALL (SELECT * FROM next_host WHERE EXISTS (SELECT 1 FROM candidate) AND NOT EXISTS (SELECT 1 FROM first_host))
            LIMIT 1)
        """
    }

    /// A query of `host, free` that locks the row of `host` (an expression) when the host still
    /// has a free slot on the row as it is once locked; `free` is read from that row. It never
    /// waits: it gives nothing when another transaction holds the row (a claimer of the host),
    /// so claimers never queue on a host's row, and the slots given back and the segments
    /// completed (whose counters are on that row) never wait behind them.
    private static func lockedSlots(host: String, defaultLimit: String) -> String {
        let limit = "coalesce(h.max_running, (SELECT max_running FROM origin_hosts WHERE host = '*'), \(defaultLimit))"
        return """
            SELECT h.host, \(limit) - h.busy AS free FROM origin_hosts h
            WHERE h.host = \(host) AND h.busy < \(limit)
            FOR UPDATE OF h SKIP LOCKED
            """
    }

    /// A query of `host, free` that locks the row of the first candidate's host (priority, then
    /// age) that has a free slot and whose row no other claimer holds: `hostWithRoom`, passing
    /// by the hosts another claim is taking from at this moment (`SKIP LOCKED`: it never waits).
    /// PostgreSQL tests `busy < limit` again on the row as it is once locked (a claim that
    /// committed since the snapshot may have taken the last slot), and `free` is read from that
    /// version.
    private static func lockedHostWithRoom(candidates: String, defaultLimit: String, idleFrom: String?) -> String {
        "SELECT h.host, \(slotLimit(defaultLimit)) - h.busy AS free "
            + withRoom(candidates: candidates, defaultLimit: defaultLimit, idleFrom: idleFrom) + "\nFOR UPDATE OF h SKIP LOCKED"
    }

    /// A host's limit, in a query where `h` is its row and `d` the default's (`'*'`).
    private static func slotLimit(_ defaultLimit: String) -> String {
        "coalesce(h.max_running, d.max_running, \(defaultLimit))"
    }

    /// The `FROM … LIMIT 1` of `hostWithRoom` and `lockedHostWithRoom`.
    private static func withRoom(candidates: String, defaultLimit: String, idleFrom: String?) -> String {
        """
        FROM (\(candidates)) c
        JOIN origin_hosts h ON h.host = c.host LEFT JOIN origin_hosts d ON d.host = '*'
        WHERE h.busy < \(slotLimit(defaultLimit))\(idleFrom.map { " AND h.busy = 0 AND c.priority >= \($0)" } ?? "")
          AND EXISTS (SELECT 1 FROM origin_hosts r LEFT JOIN origin_hosts rd ON rd.host = '*'
                      WHERE r.host <> '*' AND r.busy < coalesce(r.max_running, rd.max_running, \(defaultLimit)))
        ORDER BY c.priority DESC, c.id LIMIT 1
        """
    }

    /// The end of a claim statement whose `claimed` CTE (an update's `RETURNING`) holds the rows
    /// it took, after its CTEs of `claimHost`: those rows, or, when it took none, one row of
    /// nulls whose `contended` says whether there was a host with room (`candidate`) but no
    /// host row it could lock: other claimers held them (or took the last slots while it looked).
    static func claimedOrContended(_ claimed: String) -> String {
        """
        SELECT c.*, NOT EXISTS (SELECT 1 FROM \(claimed)) AND EXISTS (SELECT 1 FROM candidate) AND NOT EXISTS (SELECT 1 FROM host) AS contended
        FROM (VALUES (1)) one LEFT JOIN \(claimed) c ON true
        """
    }

    /// Sets a host's limit; `*` sets the default for hosts without one. A limit of 0 pauses the
    /// host: no segment or probe of it is claimed, running segments finish their current one.
    /// Pausing remembers the limit the host had (its own, or none) for `resume`.
    public static func set(_ db: PostgresConnection, host: String, limit: Int) throws {
        try db.query(
            Statements.HostLimits.set,
            [host, limit])
    }

    /// Gives a paused host (limit 0) back the limit it had when it was paused, or the default
    /// if it had none of its own. - Returns: the limit it runs under now, nil if it was not paused.
    public static func resume(_ db: PostgresConnection, host: String) throws -> Int? {
        try db.query(
            Statements.HostLimits.resume, [host, fallbackDefault]
        ).first.map { try $0.int("max_running") }
    }

    /// Removes a host's own limit, so the default applies again (`*`: the default goes back to
    /// `fallbackDefault`). - Returns: whether the host had a limit of its own.
    @discardableResult
    public static func unset(_ db: PostgresConnection, host: String) throws -> Bool {
        try db.query(Statements.HostLimits.unset, [host]).affectedRows > 0
    }

    /// Every host with its limit (explicit or default) and its slots in use now (running segments and probes).
    public static func list(_ db: PostgresConnection) throws -> [(host: String, limit: Int, explicit: Bool, running: Int)] {
        try db.query(
            Statements.HostLimits.list, [fallbackDefault]
        ).rows.map { (try $0.string("host"), try $0.int("max_running"), try $0.bool("explicit"), try $0.int("running")) }
    }
}
