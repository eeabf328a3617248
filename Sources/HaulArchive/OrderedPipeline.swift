import Dispatch
import Synchronization

/// Runs `work` for indices 0..<count on background threads, at most `window` ahead of the consumer,
/// and hands the results back strictly in index order through `take`.
///
/// Shared state lives in `Mutex`es and atomics; the semaphores only wake threads.
final class OrderedPipeline<Output: Sendable>: Sendable {
    private let results = Mutex<[Int: Result<Output, any Error>]>([:])
    private let next = Atomic<Int>(0)
    private let cancelled = Atomic<Bool>(false)
    private let slots: DispatchSemaphore
    private let progress = DispatchSemaphore(value: 0)
    private let group = DispatchGroup()
    private let count: Int
    private let window: Int

    /// Starts `threads` workers; `makeWorker` runs once on each worker thread and returns its job function.
    init(count: Int, window: Int, threads: Int, makeWorker: @escaping @Sendable () -> (Int) throws -> Output) {
        self.count = count
        self.window = window
        slots = DispatchSemaphore(value: window)
        for _ in 0..<threads {
            DispatchQueue.global().async(group: group) { [self] in
                let job = makeWorker()
                while true {
                    slots.wait()
                    let index = next.add(1, ordering: .relaxed).oldValue
                    guard index < count, !cancelled.load(ordering: .relaxed) else {
                        slots.signal()
                        return
                    }
                    let result = Result { try job(index) }
                    results.withLock { $0[index] = result }
                    progress.signal()
                }
            }
        }
    }

    /// Blocks until the result for `index` is ready; call with 0, 1, 2... in order, from one thread.
    func take(_ index: Int) throws -> Output {
        while true {
            if let result = results.withLock({ $0.removeValue(forKey: index) }) {
                slots.signal()
                return try result.get()
            }
            progress.wait()
        }
    }

    /// Stops the workers and waits for them; `discard` receives every result never taken.
    func finish(discard: (Output) -> Void) {
        cancelled.store(true, ordering: .relaxed)
        for _ in 0..<window { slots.signal() }
        group.wait()
        for result in results.withLock({ $0.values }) { if case .success(let output) = result { discard(output) } }
    }
}
