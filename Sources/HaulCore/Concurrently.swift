import Foundation
import Synchronization

/// Blocking calls (libcurl requests) run side by side on threads of their own, never on the
/// cooperative pool, for work that waits on the network rather than the CPU: a batch's S3
/// lookups, each a round trip that would otherwise wait for the one before.
public enum Concurrently {
    /// `body(0)`, `body(1)` … `body(count - 1)` on up to `width` threads; the results in order.
    public static func map<Result: Sendable>(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) -> Result) -> [Result] {
        guard count > 1, width > 1 else { return (0..<count).map(body) }
        let work = Work<Result>(count: count)
        let finished = DispatchGroup()
        for _ in 0..<min(width, count) {
            finished.enter()
            Thread {
                while let index = work.next() { work.store(body(index), at: index) }
                finished.leave()
            }.start()
        }
        finished.wait()
        return work.results()
    }

    /// The indices still to take and the results so far, shared by the threads.
    private final class Work<Result: Sendable>: Sendable {
        private let count: Int
        private let taken = Atomic<Int>(0)
        private let slots: Mutex<[Result?]>

        init(count: Int) {
            self.count = count
            slots = Mutex(Array(repeating: nil, count: count))
        }

        /// The next index to work on, `nil` when all are taken.
        func next() -> Int? {
            let index = taken.add(1, ordering: .relaxed).oldValue
            return index < count ? index : nil
        }

        func store(_ result: Result, at index: Int) { slots.withLock { $0[index] = result } }

        /// Every result, once all threads are done.
        func results() -> [Result] { slots.withLock { $0.map { $0! } } }
    }
}
