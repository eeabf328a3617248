import Synchronization

/// Bytes received by this process for the transfers `haul get` watches, for its progress bar
/// between checkpoints, and word of transfers this process settled, so that `haul get` learns
/// at once that its transfer is final.
///
/// The byte path takes no lock: the watched transfers are fixed when the counter is made, a lane
/// looks up its transfer's `Tally` once (per segment, per file of a batch) and adds every chunk
/// to it atomically. (A `Mutex` taken per chunk, a priority-inheritance futex on Linux, made
/// eight connections slower than one; a table of every transfer a long-running worker ever
/// fetched also grew without end.)
public final class ProgressCounter: Sendable {
    /// One transfer's bytes, added to from any lane.
    final class Tally: Sendable {
        private let bytes = Atomic<Int64>(0)

        func add(_ count: Int) {
            bytes.add(Int64(count), ordering: .relaxed)
        }

        var total: Int64 { bytes.load(ordering: .relaxed) }
    }

    private let tallies: [Int64: Tally]
    private let settled = Wakeup()

    /// A counter of the bytes of `watched` transfers (none: a worker that only settles).
    public init(watching watched: [Int64] = []) {
        tallies = Dictionary(watched.map { ($0, Tally()) }, uniquingKeysWith: { first, _ in first })
    }

    /// The tally of `transfer`; `nil` when nobody watches it.
    func tally(for transfer: Int64) -> Tally? {
        tallies[transfer]
    }

    /// Bytes received for `transfer` by this process (retries count again); 0 when not watched.
    public func bytes(for transfer: Int64) -> Int64 {
        tallies[transfer]?.total ?? 0
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
