/// Where one whole file's bytes go as a small-file batch's probe response arrives (lane thread
/// only): a partial file on a folder, a `PutObject` in a bucket. Its `BatchStore` stores it.
public protocol WholeFileSink: AnyObject {
    /// The file it takes.
    var file: WholeFile { get }
    /// Takes the next bytes of the body; `completing`: they are its last.
    func write(_ bytes: UnsafeRawBufferPointer, completing: Bool) throws
    /// The whole body arrived, its size and digest are right: readies it to be stored.
    func complete() throws
    /// Drops what was written: nothing is stored.
    func discard()
}

/// The planning leases of a batch of small files (the worker's `BatchLeases`), which a batch
/// store checks before a file becomes visible.
public protocol BatchFence: AnyObject {
    /// Renews the leases once a heartbeat has passed since the last renewal.
    func renewIfDue()
    /// Whether transfer `id`'s lease is certainly held for a while yet (from the latest renewal
    /// when it is recent enough, no round trip).
    func isHeld(_ id: Int64) -> Bool
    /// Of `ids`, the transfers whose leases the database says are held now (a round trip: a
    /// folder checks once, for the whole batch, right before its renames). - Throws: when the
    /// database could not be asked.
    func heldNow(_ ids: [Int64]) throws -> Set<Int64>
}
