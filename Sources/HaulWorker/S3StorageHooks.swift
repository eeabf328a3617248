import HaulQueue
import HaulS3Storage

// The worker's side of the S3 storage's hooks (`HaulS3Storage/WorkerHooks.swift`).

extension BatchLeases: BatchFence {}

extension ObjectPut: WholeFileSink {}

extension ObjectBatchStorage: BatchStorage {
    /// Waits for the `PutObject`s' answers.
    func store(_ whole: [BatchedProbe<Self>], unchanged: [BatchedProbe<Self>], planner: Planner) throws -> [BatchedProbe<Self>] {
        let stored = whole.filter { probe in
            do {
                try probe.sink?.settle()
                return true
            } catch {
                planner.planningFailed(probe.claim, error: error)
                return false
            }
        }
        return stored + unchanged
    }
}
