import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// What a probe in a batch does with its transfer.
enum BatchVerdict {
    case waiting
    /// The whole file is in this response, going into its storage's sink.
    case whole
    /// `304 Not Modified`: the file on storage is current.
    case unchanged
    /// For the fetchers: the plan to write with every segment queued.
    case handOff(TransferLeases.Plan)
    /// Another worker holds the transfer now (or it was cancelled): leave it alone.
    case lost
    case failed(Error)
}

/// Thrown by a probe's head callback to drop a response the fetchers will ask for again.
private struct HandOff: Error {}

/// One transfer's probe in a batch, as its response arrives (on the lane's thread only).
final class BatchedProbe {
    let claim: TransferLeases.Claim
    let storage: BatchStorage
    let previous: TransferLeases.PreviousVersion?
    private(set) var verdict = BatchVerdict.waiting
    private(set) var plan: TransferLeases.Plan?
    private(set) var digest: String?
    /// Where the body goes, once the head said that the response holds the whole file.
    private(set) var sink: (any WholeFileSink)?
    private var digester: Digester?
    private var received: Int64 = 0
    /// What a plan may be, read from the worker when the job is made.
    private var limits = PlanLimits()

    init(claim: TransferLeases.Claim, storage: BatchStorage, previous: TransferLeases.PreviousVersion?) {
        self.claim = claim
        self.storage = storage
        self.previous = previous
    }

    var fields: [(String, String)] { [("transfer", String(claim.info.id))] }
    var isWhole: Bool { if case .whole = verdict { true } else { false } }
    var isUnchanged: Bool { if case .unchanged = verdict { true } else { false } }
    /// Whether the probe failed on a transfer that has mirrors to try instead (`BatchProbe`).
    var failedWithMirrors: Bool { if case .failed = verdict { claim.info.mirrored } else { false } }

    /// What `finish(probed:)` records, for a probe that finished its transfer.
    var probedFile: TransferLeases.ProbedFile? {
        guard let plan else { return nil }
        return TransferLeases.ProbedFile(claim: claim, plan: plan, digest: digest, unchanged: isUnchanged)
    }

    /// The probe's request (its first segment's, as a lone probe's), with callbacks that write
    /// the body and count it in `shared`'s progress and metrics.
    func job(shared: WorkerShared) -> MultiClient.Job {
        let info = claim.info
        let config = shared.config
        limits = shared.planLimits(for: info)
        let last = config.backend.firstSegment(requested: info.segmentSize) - 1
        var request = shared.request(for: info, first: 0, last: last, bodyCap: limits)
        ConditionalProbe.ask(&request, ifChangedSince: previous)
        let tally = shared.progress.tally(for: info.id)
        return MultiClient.Job(
            request: request, onHead: { [self] head in try accept(head, requestedLast: last, config: config, names: shared.originNames) },
            onData: { [self] bytes in
                try write(bytes)
                tally?.add(bytes.count)
                shared.metrics.bytesFetched.add(bytes.count)
            })
    }

    /// Decides from the head what this probe does with its response.
    private func accept(_ head: ResponseHead, requestedLast: Int64, config: WorkerConfig, names: OriginNames) throws {
        let info = claim.info
        let outcome = try ProbeOutcome.classify(head, requestedLast: requestedLast, url: info.url)
        if outcome == .notModified || ConditionalProbe.notNewer(head, than: previous, info: info) {
            let kept = try ConditionalProbe.unchanged(head, previous: previous)
            plan = TransferLeases.Plan(
                dest: kept.dest, host: info.host, size: kept.size, etag: kept.etag,
                lastModified: kept.lastModified, contentType: nil, acceptsRanges: false, ranges: [], unknownLength: false)
            verdict = .unchanged
            return
        }
        let plan = try config.placed(
            Planner.plan(
                outcome, head: head, info: info, storage: config.storage, occupant: { [storage, claim] in try storage.occupant(of: $0, for: claim) },
                limits: limits, names: names), info: info)
        let staged = info.options.extract == true || info.options.uploadTo != nil
        // A fleet transfer named by the origin has its name checked against the other active
        // transfers' when its plan is recorded (`writePlan`), before a byte is written.
        let namedHere = info.dest == nil && info.options.localTarget == nil
        guard plan.ranges.count <= 1, !plan.unknownLength, storage.takesWhole(size: plan.size ?? 0), !staged, !namedHere else {
            verdict = .handOff(plan)
            throw HandOff()
        }
        sink = try storage.sink(for: plan, of: claim)
        digester = info.digestAlgorithm.map(Digester.init)
        self.plan = plan
        verdict = .whole
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        // An unchanged file's body (`-N`: a 200 no newer than the file) is dropped, as a lone probe drops it.
        guard !isUnchanged else { return }
        guard storage.leases.wasHeld(claim.info.id) else { throw HaulError(.leaseLost, "another worker holds transfer \(claim.info.id) now") }
        let size = plan?.size ?? 0
        guard received + Int64(bytes.count) <= size, let sink else {
            throw HaulError(.sizeMismatch, "the origin sent more than the \(size) bytes it announced", transient: true)
        }
        try sink.write(bytes, completing: received + Int64(bytes.count) == size)
        digester?.update(bytes)
        received += Int64(bytes.count)
    }

    /// Takes the request's outcome: checks the size and digest of a whole file and readies it
    /// to be stored (the storing itself waits for the whole batch).
    func end(_ outcome: Result<HTTPClient.Summary, Error>) {
        if case .handOff = verdict { return }
        do {
            _ = try outcome.get()
            guard case .whole = verdict, let sink else { return }
            let size = plan?.size ?? 0
            guard received == size else {
                throw HaulError(.incomplete, "the origin sent \(received) of the \(size) bytes it announced", transient: true)
            }
            digest = try digester.map { try claim.info.verified($0.finish()) }
            try sink.complete()
        } catch {
            discard()
            verdict = storage.leases.isHeld(claim.info.id) ? .failed(error) : .lost
        }
    }

    /// Drops the file of a probe that will not be stored.
    func discard() {
        sink?.discard()
    }
}
