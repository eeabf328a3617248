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
            Statements.WorkerRegistry.beat,
            [heartbeat.workerID, heartbeat.host, heartbeat.pid, heartbeat.roles, heartbeat.version, heartbeat.bytesFetched])
    }

    /// Marks a worker stopped (a clean shutdown; a crashed one just goes silent).
    public func markStopped(_ workerID: String) throws {
        try db.query(Statements.WorkerRegistry.markStopped, [workerID])
    }
}
