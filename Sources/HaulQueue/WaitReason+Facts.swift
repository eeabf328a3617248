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
            Statements.WaitReason.fleet, [WorkerRegistry.deadAfter]
        ).first
        let alive = try fleet?.int("alive") ?? 0
        let fleetRunning = try fleet?.int("running") ?? 0
        var facts: [Int64: Facts] = [:]
        for row in try db.query(
            Statements.WaitReason.facts, [ids, HostLimits.fallbackDefault]
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
