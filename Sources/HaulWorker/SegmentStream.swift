import Foundation
import HaulCore
import HaulQueue
import HaulStorage

/// Thrown when the database says another worker owns the segment now: stop, write nothing more.
struct LeaseLost: Error {}

/// Thrown when the segment was split by an idle worker and this one has reached its new end.
struct SegmentEnded: Error {}

/// Thrown when the lane gives the rest of its segment back to work that waits (`FairShare`).
struct YieldRequested: Error {}

/// Thrown when an operator paused or canceled the transfer mid-segment.
struct TransferStopped: Error {
    let state: TransferState
}

/// Streams one claimed segment's bytes into storage: buffered writes, and checkpoints handed to
/// the group-commit thread (`CheckpointRecorder`) at least every second or 16 MiB
/// (`WorkerConfig.checkpointBytes`) without waiting for them; the outcome of the latest one is
/// read on the next chunk. Completion and release wait.
/// Owned by one role thread; reused for segment after segment.
final class SegmentStream {
    private let config: WorkerConfig
    private let database: ResilientConnection
    private let checkpoints: CheckpointRecorder
    /// Where segments go; asked, never told apart by type.
    private let backend: any Storage
    /// The lane's buffered writer, which a storage of files writes through (reused across segments).
    private let writer = SegmentWriter()
    private let progress: ProgressCounter
    private let metrics: WorkerMetrics
    /// Where a `haul get`'s partial files stay locked (`WorkerShared.heldPartials(for:)`).
    private let heldPartials: (TransferInfo) -> HeldPartials?
    /// When the lane yields to waiting work (`nil`: never), and the worker's turns at it.
    private let fairShare: FairShare?
    private let yieldTurns: YieldTurns
    private var segment: ClaimedSegment? {
        didSet {
            extent = segment.map { Extent(length: $0.length) }
            // A stop reason belongs to its segment and never outlives it.
            if segment == nil { stopReason = nil }
        }
    }
    /// What every chunk reads of the current segment (`nil`: no segment), kept apart from it so
    /// that no 16 KiB chunk copies the segment (retaining each of its transfer's strings).
    private var extent: Extent?
    private struct Extent {
        /// `nil`: a body of unknown length, read to its end.
        let length: Int64?
    }
    /// Where the segment's bytes go (`Storage.openSegment`).
    private var sink: (any SegmentSink)?
    /// When the sink's last byte stores the whole file (`SegmentSink.lastByteCommits`), that
    /// byte waits here until the database confirms the lease (see `sendHeldByte`).
    private var heldByte: UInt8?
    private var startDone: Int64 = 0
    private var lastCheckpoint = Date()
    /// When the segment's stream began on this lane.
    private var began = Date()
    /// Whether the last segment was given back to waiting work (`yieldRest`), until `takeYielded`.
    private var yielded = false
    private var bytesAtCheckpoint: Int64 = 0
    private var ticket: CheckpointRecorder.Ticket?
    /// The progress tally of the segment's transfer, when `haul get` watches it.
    private var tally: ProgressCounter.Tally?
    /// Bytes received but not yet added to `tally` and the metrics, which every lane shares:
    /// added per 16 KiB chunk, the lanes of one file took turns at their cache lines with every
    /// chunk. They are added every `reportBytes`, and every `reportInterval` by `keepAlive`, so
    /// that a progress bar (its rate sampled every half second) moves evenly on a slow link.
    private var unreported = 0
    private var lastReport = Date()
    private static let reportBytes = 1 << 20
    private static let reportInterval = 0.2
    /// Whether an idle worker split this segment while it streamed.
    private var shortened = false
    /// Why the stream must stop, learned while no bytes were arriving (lease lost, paused…).
    private(set) var stopReason: Error?

    init(shared: WorkerShared, database: ResilientConnection) {
        self.config = shared.config
        self.database = database
        self.checkpoints = shared.checkpoints
        self.backend = shared.config.backend
        self.progress = shared.progress
        self.metrics = shared.metrics
        self.heldPartials = shared.heldPartials(for:)
        self.fairShare = shared.config.yieldAfter.map(FairShare.init)
        self.yieldTurns = shared.yieldTurns
    }

    /// The segment being streamed, with `bytesDone` as of its claim.
    var current: ClaimedSegment? { segment }

    /// Bytes durable or buffered for the current segment, counted from its first byte.
    var position: Int64 { startDone + (sink?.bytesWritten ?? 0) + (heldByte == nil ? 0 : 1) }

    /// Prepares to receive the segment's bytes from its resume point. A segment whose origin
    /// cannot serve ranges restarts from its first byte.
    func begin(_ claimed: ClaimedSegment) throws {
        var claimed = claimed
        // A part is atomic (an S3 part): its segment always re-sends it whole.
        if (!claimed.transfer.acceptsRanges || backend.features.contains(.atomicSegments)) && claimed.bytesDone > 0 { claimed.bytesDone = 0 }
        segment = claimed
        ticket = nil
        tally = progress.tally(for: claimed.transferID)
        shortened = false
        stopReason = nil
        startDone = claimed.bytesDone
        bytesAtCheckpoint = startDone
        lastCheckpoint = Date()
        began = lastCheckpoint
        guard let dest = claimed.transfer.dest else { throw HaulError(.unplanned, "segment \(claimed.index) has no destination") }
        heldByte = nil
        sink?.close()
        sink = nil
        sink = try backend.openSegment(Self.target(claimed, dest: dest, holding: heldPartials(claimed.transfer)), writer: writer)
    }

    /// What the storage needs to know of `claimed` to open its sink.
    static func target(_ claimed: ClaimedSegment, dest: String, holding: HeldPartials?) -> SegmentTarget {
        let transfer = claimed.transfer
        return SegmentTarget(
            dest: dest, partFiles: transfer.layout == .parts, generation: claimed.generation, index: claimed.index, offset: claimed.offset,
            length: claimed.length, resumeAt: claimed.bytesDone, lease: claimed.leaseToken, url: transfer.url, fileSize: transfer.size,
            uploadID: transfer.objectUploadID, contentType: transfer.contentType, expectedDigest: transfer.expectedDigest, holding: holding,
            name: "segment \(claimed.index) of transfer \(claimed.transferID)", retryCommand: transfer.retryCommand)
    }

    /// Writes received bytes; hands over a checkpoint when one is due. A checkpoint that
    /// learned of a split is read first, so that no byte past the new end is written: the
    /// request stops right there (its connection closes), the rest belongs to another segment.
    func accept(_ bytes: UnsafeRawBufferPointer) throws {
        if let settled = ticket?.settlement {
            ticket = nil
            try check(settled)
        }
        guard let extent else { return }
        if let length = extent.length, position + Int64(bytes.count) > length {
            guard shortened else {
                throw HaulError(
                    .longBody, "origin sent more than the \(length) bytes of segment \(segment?.index ?? 0)",
                    hint: "the origin's range support is broken", transient: true)
            }
            try write(UnsafeRawBufferPointer(rebasing: bytes[0..<Int(max(0, length - position))]))
            throw SegmentEnded()
        }
        try write(bytes)
        unreported += bytes.count
        if unreported >= Self.reportBytes { report() }
        // A checkpoint due by time is `keepAlive`'s, which libcurl has called before every chunk.
        if position - bytesAtCheckpoint >= config.checkpointBytes {
            ticket = try submit(completes: false)
        }
    }

    /// Called by libcurl before every chunk, and about once a second even when the origin sends
    /// nothing: reports the bytes received when `reportInterval` has passed, renews the lease
    /// with a checkpoint when one is due, and says whether to go on (`false` once the latest
    /// checkpoint found the lease gone or the transfer stopped; the reason is in `stopReason`).
    func keepAlive() -> Bool {
        guard extent != nil else { return true }
        guard stopReason == nil else { return false }
        do {
            if let settled = ticket?.settlement {
                ticket = nil
                try check(settled)
            }
            let now = Date()
            if now.timeIntervalSince(lastReport) >= Self.reportInterval { report() }
            if now.timeIntervalSince(lastCheckpoint) >= min(config.checkpointInterval, config.heartbeat) {
                ticket = try submit(completes: false)
            }
        } catch {
            stopReason = error
        }
        return stopReason == nil
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let sink else { return }
        let last = sink.lastByteCommits && !bytes.isEmpty && position + Int64(bytes.count) == segment?.length ?? -1
        try send(last ? UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 1)]) : bytes)
        if last { heldByte = bytes[bytes.count - 1] }
    }

    private func send(_ bytes: UnsafeRawBufferPointer) throws {
        guard let sink else { return }
        // While the storage is behind, the origin's bytes wait here: the lease is renewed meanwhile.
        do {
            try sink.write(bytes) { keepAlive() }
        } catch let error as HaulError where error.code == .interrupted {
            throw stopReason ?? error
        }
    }

    /// The fence of a `PutObject`, which no later record can take back: its last byte goes out
    /// only after a checkpoint found this worker still holding the lease (and renewed it), so a
    /// worker that froze mid-object and woke after its lease ran out never completes the request.
    /// What is left (a freeze between this check and the last byte) is closed by the request's
    /// precondition: it replaces only the object it saw when it started, never a newer one.
    private func sendHeldByte() throws {
        guard let byte = heldByte else { return }
        if let ticket = try submit(completes: false) { try check(ticket.wait()) }
        try withUnsafeBytes(of: byte) { try send($0) }
        heldByte = nil
    }

    /// Adds the bytes received since the last report to the progress tally and the metrics.
    private func report() {
        lastReport = Date()
        guard unreported > 0 else { return }
        tally?.add(unreported)
        metrics.bytesFetched.add(unreported)
        unreported = 0
    }

    private func submit(completes: Bool, etag: String? = nil) throws -> CheckpointRecorder.Ticket? {
        report()
        guard let segment else { return nil }
        try sink?.flush()
        let done = min(position, segment.length ?? position)
        bytesAtCheckpoint = position
        lastCheckpoint = Date()
        let file = sink?.syncHandle
        let asks = !completes && fairStep(othersWait: nil) == .ask
        return checkpoints.submit(segment, file: file, bytesDone: done, part: part(length: done), etag: etag, completes: completes, asksWaiting: asks)
    }

    /// Stops the segment's sink without completing it (an atomic segment's bytes are dropped).
    private func dropUnfinished() {
        sink?.drop()
        heldByte = nil
    }

    private func check(_ settlement: CheckpointRecorder.Settlement) throws {
        switch settlement {
        case .recorded: return
        case .othersWait:
            if fairStep(othersWait: true) == .yield, yieldTurns.take(now: Date().timeIntervalSinceReferenceDate, budget: fairShare?.budget ?? 0) {
                throw YieldRequested()
            }
        case .shortened(let length):
            segment = segment.map { $0.shortened(to: length) }
            shortened = true
            if position >= length { throw SegmentEnded() }
        case .leaseLost: throw LeaseLost()
        case .transferStopped(let state): throw TransferStopped(state: state)
        case .failed(let error): throw error
        }
    }

    /// Hands the finished segment to the checkpoint recorder, which makes it durable and records
    /// it while this thread already claims the next one. The segment keeps its lease until then;
    /// should the lease run out first, the completion is fenced off and another worker refetches.
    func complete() throws {
        if let settled = ticket?.settlement {
            ticket = nil
            do { try check(settled) } catch is SegmentEnded {} catch is YieldRequested {}
        }
        guard let segment = self.segment else { return }
        if let length = segment.length, position < length {
            throw HaulError(.shortBody, "segment \(segment.index) ended after \(position) of \(length) bytes", transient: true)
        }
        try sendHeldByte()
        let receipt = try sink?.finish { _ = keepAlive() }
        _ = try submit(completes: true, etag: receipt?.etag)
        sink?.close()
        self.segment = nil
        metrics.segmentsCompleted.increment()
    }

    /// What `FairShare` says of the current segment now. Only a segment whose rest a later
    /// request can resume yields: a ranged one of known length, not an atomic one (an S3 part).
    private func fairStep(othersWait: Bool?) -> FairShare.Step {
        guard let fairShare, let segment, segment.transfer.acceptsRanges, !backend.features.contains(.atomicSegments) else { return .keep }
        let now = Date()
        let held = now.timeIntervalSince(began)
        return fairShare.step(
            held: held, rate: held > 0 ? Double(position - startDone) / held : 0, rest: segment.length.map { $0 - position }, othersWait: othersWait,
            sinceWorkerYield: yieldTurns.sinceLast(now: now.timeIntervalSinceReferenceDate))
    }

    /// Gives the rest of the segment back to the queue, its received bytes kept, claimable again
    /// after `FairShare.restDelay`: the lane takes the work that waits first.
    func yieldRest() {
        release(after: FairShare.restDelay)
        yielded = true
    }

    /// Whether the last segment was given back to waiting work (asked once: it forgets).
    func takeYielded() -> Bool {
        defer { yielded = false }
        return yielded
    }

    /// Saves what was received and hands the segment back to the queue (shutdown, pause), to be
    /// claimed again after `delay` seconds.
    func release(after delay: Double = 0) {
        guard let segment else { return }
        dropUnfinished()
        let settled = (try? submit(completes: false))??.wait()
        sink?.close()
        if case .leaseLost = settled {
            self.segment = nil
            return
        }
        database.bestEffort("release segment \(segment.id)") { conn in try SegmentLeases(conn, workerID: config.workerID).release(segment, after: delay) }
        self.segment = nil
    }

    /// Records a failed attempt (with backoff) after saving what was received.
    func fail(_ error: HaulError) {
        guard let segment else { return }
        dropUnfinished()
        _ = (try? submit(completes: false))??.wait()
        sink?.close()
        let delay = config.backoff.delay(afterAttempt: segment.attempts, retryAfter: error.retryAfter, jitter: Double.random(in: 0..<1))
        let maxAttempts = segment.transfer.options.maxAttempts ?? config.maxAttempts
        database.bestEffort("record the failed attempt of segment \(segment.id)") { conn in
            try SegmentLeases(conn, workerID: config.workerID).fail(segment, error: error, retryAfter: delay, maxAttempts: maxAttempts)
        }
        // Its last attempt fails the transfer.
        progress.announceSettled()
        metrics.retried(reason: error.code.rawValue)
        if error.isTransient && segment.attempts < maxAttempts {
            Log.warning("retrying in \(Int(delay.rounded(.up))) s: \(error.message)", fields(segment) + [("attempt", "\(segment.attempts) of \(maxAttempts)")])
        } else {
            Log.warning("segment failed: \(error.description)", fields(segment) + [("attempts", String(segment.attempts))])
        }
        self.segment = nil
    }

    /// Drops the segment without touching its row (its lease is gone).
    func abandon() {
        report()
        dropUnfinished()
        sink?.close()
        segment = nil
    }

    private func part(length: Int64) -> PartRecord? {
        guard let partPath = sink?.partPath, let segment else { return nil }
        return PartRecord(path: partPath, offset: segment.offset + startDone, length: length - startDone, replacesEarlierParts: startDone == 0)
    }

    func fields(_ segment: ClaimedSegment) -> [(String, String)] {
        [("transfer", String(segment.transferID)), ("segment", String(segment.index))]
    }
}
