import Synchronization

/// Bytes received by this process per transfer, for `haul get`'s progress bar between
/// checkpoints. The mutex is the only shared state on the byte path, taken once per chunk.
public final class ProgressCounter: Sendable {
    private let received = Mutex<[Int64: Int64]>([:])

    /// An empty counter.
    public init() {}

    func add(_ bytes: Int64, transfer: Int64) {
        received.withLock { $0[transfer, default: 0] += bytes }
    }

    /// Bytes received for `transfer` by this process (retries count again).
    public func bytes(for transfer: Int64) -> Int64 {
        received.withLock { $0[transfer] ?? 0 }
    }
}
