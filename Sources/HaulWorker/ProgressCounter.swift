import Synchronization

/// Bytes received by this process per transfer, for `haul get`'s progress bar between
/// checkpoints, and word of transfers this process settled, so that `haul get` learns at once
/// that its transfer is final. The mutex is the only shared state on the byte path, taken once
/// per chunk.
public final class ProgressCounter: Sendable {
    private let received = Mutex<[Int64: Int64]>([:])
    private let settled = Wakeup()

    /// An empty counter.
    public init() {}

    func add(_ bytes: Int64, transfer: Int64) {
        received.withLock { $0[transfer, default: 0] += bytes }
    }

    /// Bytes received for `transfer` by this process (retries count again).
    public func bytes(for transfer: Int64) -> Int64 {
        received.withLock { $0[transfer] ?? 0 }
    }

    /// Says that a transfer may have changed state here (finalized, planned, failed).
    func announceSettled() {
        settled.signal()
    }

    /// A mark for `waitForSettled(since:timeout:)`; take it before reading the transfers' states.
    public func settledMark() -> Int {
        settled.mark()
    }

    /// Sleeps until this process settled a transfer after `mark` (at once if it already did)
    /// or `timeout` seconds passed. A transfer settled elsewhere (another worker, an operator)
    /// is seen only through the caller's next poll, after the timeout.
    public func waitForSettled(since mark: Int, timeout: Double) {
        settled.wait(since: mark, timeout: timeout)
    }
}
