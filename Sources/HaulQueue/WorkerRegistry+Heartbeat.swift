import HaulCore
import HaulPostgres

/// Writing the `workers` table: a worker process's own row.
extension WorkerRegistry {
    /// What a worker says about itself at each heartbeat.
    public struct Heartbeat: Sendable {
        public let workerID: String
        public let host: String
        public let pid: Int
        /// Its roles, comma-separated and sorted.
        public let roles: String
        public let version: String
        /// Body bytes received since the process started.
        public let bytesFetched: Int64

        /// Creates a heartbeat.
        public init(workerID: String, host: String, pid: Int, roles: String, version: String, bytesFetched: Int64) {
            self.workerID = workerID
            self.host = host
            self.pid = pid
            self.roles = roles
            self.version = version
            self.bytesFetched = bytesFetched
        }
    }

    /// Registers the worker or refreshes its row; its rate is the bytes received since the
    /// previous heartbeat over the time between the two.
    public func beat(_ heartbeat: Heartbeat) throws {
        try db.query(
            """
            INSERT INTO workers (id, host, pid, roles, version, bytes_fetched)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (id) DO UPDATE
            SET rate = CASE WHEN extract(epoch FROM now() - workers.heartbeat_at) > 0
                            THEN greatest(0, excluded.bytes_fetched - workers.bytes_fetched) / extract(epoch FROM now() - workers.heartbeat_at)
                            ELSE workers.rate END,
                bytes_fetched = excluded.bytes_fetched,
                heartbeat_at = now(),
                stopped_at = NULL
            """,
            [heartbeat.workerID, heartbeat.host, heartbeat.pid, heartbeat.roles, heartbeat.version, heartbeat.bytesFetched])
    }

    /// Marks a worker stopped (a clean shutdown; a crashed one just goes silent).
    public func markStopped(_ workerID: String) throws {
        try db.query("UPDATE workers SET stopped_at = now() WHERE id = $1", [workerID])
    }
}
