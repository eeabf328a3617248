/// Where one whole file's bytes go as a small-file batch's probe response arrives (lane thread
/// only): a partial file on a folder, a `PutObject` in a bucket.
public protocol WholeFileSink: AnyObject {
    /// Takes the next bytes of the body; `completing`: they are its last.
    func write(_ bytes: UnsafeRawBufferPointer, completing: Bool) throws
    /// The whole body arrived, its size and digest are right: readies it to be stored.
    func complete() throws
    /// Drops what was written: nothing is stored.
    func discard()
}

/// A whole file that its storage stores by itself once complete (`BatchStore.sink`).
public protocol StoredWholeFile: WholeFileSink {
    /// Waits until the file is stored for good. - Throws: when it could not be (nothing is).
    func settle() throws
}

/// The planning leases of a batch of small files (the worker's `BatchLeases`), which a storage
/// that stores whole files by itself checks before a file becomes visible.
public protocol BatchFence: AnyObject {
    /// Renews the leases once a heartbeat has passed since the last renewal.
    func renewIfDue()
    /// Whether transfer `id`'s lease is certainly held for a while yet.
    func isHeld(_ id: Int64) -> Bool
}
