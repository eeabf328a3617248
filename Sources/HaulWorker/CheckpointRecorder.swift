import CLinux
import Foundation
import HaulCore
import HaulQueue
import HaulStorage
import Synchronization

/// Makes checkpoints durable off the byte path, with group commit.
///
/// Fetchers `pwrite` their bytes and hand a checkpoint here; this thread `fdatasync`s each file
/// once for every checkpoint waiting on it (several segments of one inplace file share one
/// flush instead of each flushing everyone's pages), then records the checkpoints with their
/// lease fence. A fetcher never waits for a checkpoint — it reads the outcome of its latest one
/// on the next chunk — except to complete or release a segment, which must be settled first.
final class CheckpointRecorder: @unchecked Sendable {
    // `condition` guards `queue`, `stopping` and `thread`; `database` belongs to the syncer thread.
    private let condition = NSCondition()
    private var queue: [Request] = []
    private var stopping = false
    private let database: ResilientConnection
    private let workerID: String
    private let lease: Double
    private let scope: WorkScope
    private let wakeup: Wakeup
    private var thread: ServiceThread?

    /// What a fetcher learns about one checkpoint or completion.
    enum Settlement: Sendable {
        case recorded
        case shortened(Int64)
        /// Recorded, and work of another transfer waits for a lane (asked for by `FairShare`).
        case othersWait
        case leaseLost
        case transferStopped(TransferState)
        case failed(HaulError)
    }

    /// The answer slot of one request.
    final class Ticket: Sendable {
        private let state = Mutex<Settlement?>(nil)
        private let done = DispatchSemaphore(value: 0)

        /// The settlement if there is one yet; never blocks.
        var settlement: Settlement? { state.withLock { $0 } }

        /// Blocks until the request is settled.
        func wait() -> Settlement {
            done.wait()
            done.signal()
            return state.withLock { $0 } ?? .recorded
        }

        fileprivate func settle(_ value: Settlement) {
            state.withLock { $0 = value }
            done.signal()
        }
    }

    private struct Request {
        let segment: ClaimedSegment
        let file: SyncHandle?
        let bytesDone: Int64
        let part: PartRecord?
        let etag: String?
        let completes: Bool
        /// Whether to ask, once recorded, whether other work waits for a lane (`WaitingWork`).
        let asksWaiting: Bool
        let ticket: Ticket
    }

    /// - Parameters:
    ///   - database: patient (its writes are owed: completions, last checkpoints); `stop(timeout:)`
    ///     bounds how long a stopping worker waits for it.
    ///   - wakeup: one idle lane is woken when a completion makes a transfer ready to finalize.
    init(config: WorkerConfig, database: ResilientConnection, wakeup: Wakeup) {
        self.wakeup = wakeup
        self.database = database
        workerID = config.workerID
        lease = config.lease
        scope = config.scope
    }

    /// Starts the syncer thread.
    func start() {
        let service = ServiceThread("checkpoints") { [self] in run() }
        condition.lock()
        thread = service
        condition.unlock()
    }

    /// Drains what is queued, then ends the thread (call after every fetcher has stopped).
    func stop(timeout: Double) {
        condition.lock()
        stopping = true
        let service = thread
        condition.broadcast()
        condition.unlock()
        service?.join(until: .now() + timeout)
    }

    /// Queues a checkpoint (or the completion) of `segment` at `bytesDone`, whose bytes are
    /// already written to `file` (nil: an S3 part, nothing to sync). The file is synced through
    /// that open file, never by its name, which may since name another. A queued checkpoint of
    /// the same segment not yet taken is replaced. `etag` is a completed S3 part's. With
    /// `asksWaiting` a recorded checkpoint settles as `.othersWait` when other work waits for a lane.
    func submit(
        _ segment: ClaimedSegment, file: SyncHandle?, bytesDone: Int64, part: PartRecord?, etag: String? = nil, completes: Bool, asksWaiting: Bool = false
    ) -> Ticket {
        let request = Request(
            segment: segment, file: file, bytesDone: bytesDone, part: part, etag: etag, completes: completes, asksWaiting: asksWaiting, ticket: Ticket())
        condition.lock()
        if let index = queue.firstIndex(where: { $0.segment.id == segment.id && !$0.completes }) {
            queue[index].ticket.settle(.recorded)
            queue.remove(at: index)
        }
        queue.append(request)
        condition.signal()
        condition.unlock()
        return request.ticket
    }

    private func run() {
        // A fetcher's first completion, for a small file a few milliseconds after the start,
        // should not wait for a new connection.
        database.connectAhead()
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            let batch = queue
            queue = []
            let exit = stopping && batch.isEmpty
            condition.unlock()
            if exit { break }
            settle(batch)
        }
    }

    private func settle(_ batch: [Request]) {
        var files: [SyncHandle.Identity: SyncHandle] = [:]
        for case let file? in batch.map(\.file) { files[file.identity] = file }
        var syncErrors: [SyncHandle.Identity: HaulError] = [:]
        if files.count >= Flush.fileSystemThreshold, let any = files.values.first {
            // Many small files at once: one syncfs instead of one fdatasync per file.
            if let error = any.syncFileSystem() { for identity in files.keys { syncErrors[identity] = error } }
        } else {
            for (identity, file) in files {
                if let error = file.sync() { syncErrors[identity] = error }
            }
        }
        for request in batch {
            let settlement = request.file.flatMap { syncErrors[$0.identity] }.map(Settlement.failed) ?? record(request)
            if request.completes { report(settlement, completing: request.segment) }
            request.ticket.settle(settlement)
        }
    }

    /// Completions are not waited for by their fetcher, so their failures are logged here. A
    /// completion that could not be made durable leaves the segment running until its lease
    /// expires, and the rescuer queues it again.
    private func report(_ settlement: Settlement, completing segment: ClaimedSegment) {
        let fields = [("transfer", String(segment.transferID)), ("segment", String(segment.index))]
        switch settlement {
        case .recorded, .shortened, .othersWait, .transferStopped: break
        case .leaseLost: Log.warning("completed segment was fenced off: its lease had passed to another worker", fields)
        case .failed(let error):
            Log.error("completed segment could not be made durable; it will be fetched again after its lease", fields + [("error", error.description)])
        }
    }

    private func record(_ request: Request) -> Settlement {
        do {
            return try database.run(patient: true) { conn -> Settlement in
                let leases = SegmentLeases(conn, workerID: workerID)
                if request.completes {
                    switch try leases.complete(request.segment, bytesDone: request.bytesDone, part: request.part, etag: request.etag) {
                    case .leaseLost: return .leaseLost
                    case .recorded:
                        // The segment's host slot is free only now. Its fetcher claimed its next
                        // segment meanwhile, and may have found the host full for this very slot
                        // and gone idle until its next poll: one lane looks again.
                        wakeup.signalOne()
                        return .recorded
                    case .transferReady:
                        // One lane finalizes it: waking them all had the others race for the
                        // claim, their empty rounds queued behind the finalizer's statements.
                        wakeup.signalOne()
                        return .recorded
                    }
                }
                switch try leases.checkpoint(request.segment, bytesDone: request.bytesDone, lease: lease, part: request.part) {
                case .recorded:
                    guard request.asksWaiting else { return .recorded }
                    return try WaitingWork.waitsBeside(request.segment, on: conn, workerID: workerID, scope: scope) ? .othersWait : .recorded
                case .shortened(let length): return .shortened(length)
                case .leaseLost: return .leaseLost
                case .transferStopped(let state): return .transferStopped(state)
                }
            }
        } catch {
            return .failed(HaulError(.database, "could not record progress: \(error)", transient: true))
        }
    }
}
