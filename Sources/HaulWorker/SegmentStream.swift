import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// Thrown when the database says another worker owns the segment now: stop, write nothing more.
struct LeaseLost: Error {}

/// Thrown when an operator paused or canceled the transfer mid-segment.
struct TransferStopped: Error {
    let state: TransferState
}

/// Streams one claimed segment's bytes into storage: buffered writes, `fdatasync` before every
/// checkpoint, fenced checkpoints at least every second or 16 MiB, and the fenced completion.
/// Owned by one role thread; reused for segment after segment.
final class SegmentStream {
    private let config: WorkerConfig
    private let database: Database
    private let writer = SegmentWriter()
    private let progress: ProgressCounter
    private var segment: ClaimedSegment?
    private var partPath: String?
    private var startDone: Int64 = 0
    private var lastCheckpoint = Date()
    private var bytesAtCheckpoint: Int64 = 0
    private var dbDown = false

    init(config: WorkerConfig, database: Database, progress: ProgressCounter) {
        self.config = config
        self.database = database
        self.progress = progress
    }

    /// The segment being streamed, with `bytesDone` as of the last durable checkpoint.
    var current: ClaimedSegment? { segment }

    /// Bytes durable or buffered for the current segment, counted from its first byte.
    var position: Int64 { startDone + writer.bytesAccepted }

    /// Prepares to receive the segment's bytes from its resume point. A segment whose origin
    /// cannot serve ranges restarts from its first byte.
    func begin(_ claimed: ClaimedSegment) throws {
        var claimed = claimed
        if !claimed.transfer.acceptsRanges && claimed.bytesDone > 0 { claimed.bytesDone = 0 }
        segment = claimed
        startDone = claimed.bytesDone
        bytesAtCheckpoint = startDone
        lastCheckpoint = Date()
        guard let dest = claimed.transfer.dest else { throw HaulError("unplanned", "segment \(claimed.index) has no destination") }
        let files = try TransferFiles(root: config.storage, relative: dest)
        if claimed.transfer.layout == "parts" {
            let name = TransferFiles.partName(relativeDest: dest, generation: claimed.generation, index: claimed.index, lease: claimed.leaseToken)
            try FileManager.default.createDirectory(atPath: files.partsDirectory, withIntermediateDirectories: true)
            partPath = name
            try writer.open(path: config.storage.path + "/" + name, offset: 0, create: true)
        } else {
            partPath = nil
            try writer.open(path: files.partial(generation: claimed.generation), offset: claimed.offset + startDone, create: false)
        }
    }

    /// Writes received bytes and checkpoints when one is due.
    func accept(_ bytes: UnsafeRawBufferPointer) throws {
        guard let segment else { return }
        if let length = segment.length, position + Int64(bytes.count) > length {
            throw HaulError("long-body", "origin sent more than the \(length) bytes of segment \(segment.index)", hint: "the origin's range support is broken; it will be retried", transient: true)
        }
        try writer.write(bytes)
        progress.add(Int64(bytes.count), transfer: segment.transferID)
        if position - bytesAtCheckpoint >= config.checkpointBytes || Date().timeIntervalSince(lastCheckpoint) >= min(config.checkpointInterval, config.heartbeat) {
            try checkpoint()
        }
    }

    /// Makes the bytes durable and records them, renewing the lease. While the database is
    /// unreachable the stream goes on and the checkpoint is skipped; the bytes stay on disk.
    func checkpoint() throws {
        guard var segment else { return }
        try writer.sync()
        let done = position
        lastCheckpoint = Date()
        let outcome: SegmentLeases.Outcome
        do {
            outcome = try database.run(patient: false) { conn -> SegmentLeases.Outcome in
                try SegmentLeases(conn, workerID: config.workerID).checkpoint(segment, bytesDone: done, lease: config.lease, part: part(length: done))
            }
        } catch {
            if !dbDown { Log.warning("checkpoint skipped, database unreachable; downloading on", fields(segment)) }
            dbDown = true
            return
        }
        dbDown = false
        switch outcome {
        case .recorded:
            bytesAtCheckpoint = done
            segment.bytesDone = done
            self.segment = segment
        case .leaseLost:
            throw LeaseLost()
        case .transferStopped(let state):
            bytesAtCheckpoint = done
            segment.bytesDone = done
            self.segment = segment
            throw TransferStopped(state: state)
        }
    }

    /// Syncs and records the finished segment; waits out database outages (this write is owed).
    func complete() throws {
        guard let segment else { return }
        if let length = segment.length, position != length {
            throw HaulError("short-body", "segment \(segment.index) ended after \(position) of \(length) bytes", hint: "it will be retried", transient: true)
        }
        try writer.sync()
        writer.close()
        let done = position
        let recorded = try database.run(patient: true) { conn in
            try SegmentLeases(conn, workerID: config.workerID).complete(segment, bytesDone: done, part: part(length: done))
        }
        self.segment = nil
        if !recorded { throw LeaseLost() }
    }

    /// Saves what is durable and hands the segment back to the queue (shutdown, pause).
    func release() {
        guard let segment else { return }
        do {
            try checkpoint()
        } catch {}
        writer.close()
        _ = try? database.run(patient: true) { conn in try SegmentLeases(conn, workerID: config.workerID).release(self.segment ?? segment) }
        self.segment = nil
    }

    /// Records a failed attempt (with backoff) and forgets the segment. Durable bytes are kept.
    func fail(_ error: HaulError) {
        guard let segment else { return }
        try? checkpoint()
        writer.close()
        let current = self.segment ?? segment
        let delay = config.backoff.delay(afterAttempt: current.attempts, retryAfter: error.retryAfter, jitter: Double.random(in: 0..<1))
        let maxAttempts = current.transfer.options.maxAttempts ?? config.maxAttempts
        _ = try? database.run(patient: true) { conn in
            try SegmentLeases(conn, workerID: config.workerID).fail(current, error: error, retryAfter: delay, maxAttempts: maxAttempts)
        }
        Log.warning("segment attempt failed", fields(current) + [("error", error.description), ("retry_in", String(format: "%.1fs", delay))])
        self.segment = nil
    }

    /// Drops the segment without touching its row (its lease is gone).
    func abandon() {
        writer.close()
        segment = nil
    }

    private func part(length: Int64) -> PartRecord? {
        guard let partPath, let segment else { return nil }
        return PartRecord(path: partPath, offset: segment.offset + startDone, length: length - startDone, replacesEarlierParts: startDone == 0)
    }

    func fields(_ segment: ClaimedSegment) -> [(String, String)] {
        [("transfer", String(segment.transferID)), ("segment", String(segment.index))]
    }
}
