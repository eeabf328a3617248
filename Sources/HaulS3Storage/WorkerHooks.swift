/// The planning leases of a batch of small files (the worker's `BatchLeases`).
public protocol BatchFence: AnyObject {
    /// Renews the leases once a heartbeat has passed since the last renewal.
    func renewIfDue()
    /// Whether transfer `id`'s lease is certainly held for a while yet.
    func isHeld(_ id: Int64) -> Bool
}
