import HaulPostgres

/// The worker's database connection as the S3 storage uses it (the worker's
/// `ResilientConnection`: reconnects and retries a statement whose connection was lost).
public protocol QueueDatabase: AnyObject {
    /// Runs `body` on the connection; `patient`: waits out a database outage.
    func run<T>(patient: Bool, _ body: (PostgresConnection) throws -> T) throws -> T
}

/// The planning leases of a batch of small files (the worker's `BatchLeases`).
public protocol BatchFence: AnyObject {
    /// Renews the leases once a heartbeat has passed since the last renewal.
    func renewIfDue()
    /// Whether transfer `id`'s lease is certainly held for a while yet.
    func isHeld(_ id: Int64) -> Bool
}
