import HaulPostgres
import Synchronization

/// The database connections of one worker process, a fixed few whatever its concurrency: the
/// lanes take turns on `lanes` (their statements are short and never span network I/O), the
/// checkpoint recorder has one, housekeeping and finalizers' lease renewals share one, and the
/// listener keeps its own for `LISTEN`. So a worker holds at most `laneConnections + 3`
/// (5 by default): 16 workers at any `--concurrency` fit PostgreSQL's default 100 with room
/// for the admin commands. `haul get` puts everything on one (`WorkerConfig.sharedConnection`).
final class DatabaseLinks: Sendable {
    /// The connections the lanes share, handed out in turn.
    private let lanes: [DatabaseLink]
    /// The checkpoint recorder's.
    let recorder: DatabaseLink
    /// Housekeeping's and the lease keepers'.
    let maintenance: DatabaseLink
    private let handedOut = Atomic<Int>(0)

    /// - Parameter connection: an open connection to take over for housekeeping.
    /// - Parameter contact: told of every statement's outcome, for `/healthz`.
    init(config: WorkerConfig, adopting connection: PostgresConnection?, contact: WorkerMetrics? = nil) {
        let first = DatabaseLink(conninfo: config.conninfo, adopting: config.sharedConnection ? connection : nil, contact: contact)
        if config.sharedConnection {
            lanes = [first]
            recorder = first
            maintenance = first
        } else {
            let count = max(1, min(config.concurrency, config.laneConnections))
            lanes = [first] + (1..<count).map { _ in DatabaseLink(conninfo: config.conninfo, contact: contact) }
            recorder = DatabaseLink(conninfo: config.conninfo, contact: contact)
            maintenance = DatabaseLink(conninfo: config.conninfo, adopting: connection, contact: contact)
        }
    }

    /// The connection for the next lane that starts (round robin).
    func forLane() -> DatabaseLink {
        lanes[handedOut.wrappingAdd(1, ordering: .relaxed).oldValue % lanes.count]
    }
}
