import Synchronization

/// The fairness rule: a lane that has streamed one segment for `budget` seconds gives the rest
/// of it back (a queued segment that keeps its checkpointed bytes) when its origin holds two
/// lanes or more while another origin's work waits with none (`WaitingWork`), so that no
/// origin holds every lane while others wait (docs/guide-operating.md "Yielding").
///
/// `step` is the whole decision; the lane asks the database whether others wait only when it
/// says `.ask` (with a checkpoint it sends anyway), and yields only when it says `.yield`.
struct FairShare: Sendable, Equatable {
    /// Seconds a lane streams a segment before it yields to waiting work.
    let budget: Double

    /// What a lane streaming a segment does at a checkpoint.
    enum Step: Equatable {
        /// Streams on.
        case keep
        /// Streams on, and asks with this checkpoint whether other work waits for a lane.
        case ask
        /// Gives the rest of the segment back and takes the waiting work.
        case yield
    }

    /// Seconds a yielded rest waits before any lane may claim it again: the lane that gave it
    /// back, and every other, takes the waiting work first.
    static let restDelay = 1.0

    /// The decision for a segment streamed for `held` seconds at `rate` bytes a second, with
    /// `rest` bytes left (`nil`: unknown, read to the end), `othersWait` the database's latest
    /// answer (`nil`: not asked yet) and `sinceWorkerYield` the seconds since a lane of this
    /// worker last yielded. A segment that would finish within the budget anyway keeps its lane,
    /// and a worker yields at most one lane per budget: one lane takes a whole batch of waiting
    /// files, so several yielding at once would only reopen their requests.
    func step(held: Double, rate: Double, rest: Int64?, othersWait: Bool?, sinceWorkerYield: Double) -> Step {
        guard held >= budget, sinceWorkerYield >= budget, let rest, Double(rest) > rate * budget else { return .keep }
        switch othersWait {
        case nil: return .ask
        case true?: return .yield
        case false?: return .keep
        }
    }
}

/// When a lane of this worker last yielded (`FairShare`): lanes take turns through it.
final class YieldTurns: Sendable {
    /// Milliseconds since the reference date of the latest yield; 0: never.
    private let last = Atomic<Int64>(0)

    /// Seconds since the latest yield of this worker (infinite when none).
    func sinceLast(now: Double) -> Double {
        let at = last.load(ordering: .relaxed)
        return at == 0 ? .infinity : now - Double(at) / 1000
    }

    /// Takes the turn to yield unless another lane took one less than `budget` seconds ago.
    /// - Returns: whether this lane has it.
    func take(now: Double, budget: Double) -> Bool {
        let seen = last.load(ordering: .relaxed)
        guard seen == 0 || now - Double(seen) / 1000 >= budget else { return false }
        return last.compareExchange(expected: seen, desired: Int64(now * 1000), ordering: .relaxed).exchanged
    }
}
