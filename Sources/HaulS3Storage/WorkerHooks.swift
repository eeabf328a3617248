import HaulPostgres

/// The worker's database connection as the S3 storage uses it (the worker's
/// `ResilientConnection`: reconnects and retries a statement whose connection was lost).
public protocol QueueDatabase: AnyObject {
    /// Runs `body` on the connection; `patient`: waits out a database outage.
    func run<T>(patient: Bool, _ body: (PostgresConnection) throws -> T) throws -> T
}

/// A finalizer's lease on its transfer, renewed while it works (the worker's `LeaseKeeper`).
public protocol FinalizingLease: AnyObject, Sendable {
    /// Whether a renewal found another finalizer holding the transfer.
    var isLost: Bool { get }
    /// Throws `lease-lost` once a renewal found another finalizer holding the transfer.
    func check() throws
    /// Renews now (the fence right before publishing).
    func renew() throws
}

/// The planning leases of a batch of small files (the worker's `BatchLeases`).
public protocol BatchFence: AnyObject {
    /// Renews the leases once a heartbeat has passed since the last renewal.
    func renewIfDue()
    /// Whether transfer `id`'s lease is certainly held for a while yet.
    func isHeld(_ id: Int64) -> Bool
}
