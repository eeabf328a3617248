import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// The planner for many small files at once. A batch of pending transfers of one origin is
/// probed together over the lane's `MultiClient` (connections kept across batches), each with
/// its first segment's ranged GET, as a lone probe would be. A file that fits in that one
/// response is written, verified and published by the batch, and the whole batch is recorded
/// done in one transaction, so a small file costs a share of four round trips (claim, earlier
/// versions, lease check, finish) instead of a dozen and one `syncfs` instead of its own flushes.
///
/// What the batch does not finish it hands on: a file bigger than one segment or than
/// `wholeFileLimit`, of unknown length, or with `--extract` / `--upload-to` gets its plan
/// written with every segment queued for the fetchers (its probe response is dropped after the
/// head; the fetchers ask again); a failed probe is retried with backoff like a lone one.
/// Files finished here are not checkpointed: a crash mid-batch fetches them again whole.
struct BatchProbe: LaneRole {
    let lane: Lane

    /// The largest file a batch finishes itself; bigger ones go to the fetchers and their checkpoints.
    static let wholeFileLimit: Int64 = 16 << 20

    /// Probes `claims` over at most `connections` connections at once, then settles them.
    func run(_ claims: [TransferLeases.Claim], connections: Int) throws {
        let config = shared.config
        let previous = try database.run { conn in try TransferLeases(conn, workerID: config.workerID).previousVersions(of: claims) }
        let probes = claims.map { claim in
            Probe(
                claim: claim, root: config.storage,
                previous: ConditionalProbe.baseline(recorded: previous[claim.info.id], info: claim.info, config: config))
        }
        var leasesRenewed = Date()
        lane.multi.run(
            probes.map { $0.job(shared: shared) }, connections: connections,
            shouldContinue: {
                guard !shared.isStopping() else { return false }
                if Date().timeIntervalSince(leasesRenewed) >= config.heartbeat {
                    leasesRenewed = Date()
                    let held = (try? database.run { conn in try TransferLeases(conn, workerID: config.workerID).renew(claims, lease: config.lease) }) ?? []
                    for probe in probes where !held.contains(probe.claim.info.id) { probe.leaseLost = true }
                }
                return true
            },
            onFinish: { index, outcome in probes[index].end(outcome) })
        releaseSlots(claims)
        handOnOrRetry(probes)
        try publishAndRecord(probes)
    }

    /// Every request of the batch has ended: gives its host slots back at once (rather than with
    /// the rows' final states) and wakes one of this worker's idle lanes, so the next batch fetches
    /// while this one syncs and records. Best effort: a slot not given back here is given back with its row.
    private func releaseSlots(_ claims: [TransferLeases.Claim]) {
        let config = shared.config
        database.bestEffort("give back the batch's host slots") { conn in
            try TransferLeases(conn, workerID: config.workerID).releaseSlots(claims)
        }
        shared.wakeup.signalOne()
    }

    /// Writes the plans of the files the batch hands to the fetchers; schedules the failed probes' retries.
    private func handOnOrRetry(_ probes: [Probe]) {
        let planner = Planner(lane: lane)
        for probe in probes {
            if case .handOff(let plan) = probe.verdict {
                do {
                    if case .lost = try planner.record(plan, of: probe.claim, keepFirst: false) {
                        Log.warning("planning lease lost; another worker plans it", probe.fields)
                    }
                } catch {
                    planner.planningFailed(probe.claim, error: error)
                }
            }
            if case .failed(let error) = probe.verdict { planner.planningFailed(probe.claim, error: error) }
            if case .lost = probe.verdict { Log.warning("planning lease lost mid-probe; another worker has it", probe.fields) }
        }
    }

    /// Publishes the files the batch fetched whole and records them, and the unchanged ones,
    /// done in one transaction: data synced first, then (still holding the leases) the
    /// renames, then their folders, then the rows.
    private func publishAndRecord(_ probes: [Probe]) throws {
        let config = shared.config
        let planner = Planner(lane: lane)
        var fetched = probes.filter { if case .whole = $0.verdict { true } else { false } }
        let unchanged = probes.filter { if case .unchanged = $0.verdict { true } else { false } }
        let unsynced = Flush.paths(Set(fetched.map { $0.partial }))
        fetched.removeAll { probe in
            guard let error = unsynced[probe.partial] else { return false }
            probe.discard()
            planner.planningFailed(probe.claim, error: error)
            return true
        }
        let held = try database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: config.workerID).held(fetched.map { $0.claim } + unchanged.map { $0.claim })
        }
        fetched.removeAll { probe in
            guard held.contains(probe.claim.info.id) else {
                probe.discard()
                Log.warning("planning lease lost before publishing; another worker has it", probe.fields)
                return true
            }
            do {
                try probe.publish()
                return false
            } catch {
                probe.discard()
                planner.planningFailed(probe.claim, error: error)
                return true
            }
        }
        let folders = Set(fetched.map { StorageRoot.folder(of: $0.destination) })
        for (folder, error) in Flush.paths(folders) {
            Log.warning("could not sync a folder; a crash may lose its new names", [("folder", folder), ("error", error.description)])
        }
        let done = fetched + unchanged.filter { held.contains($0.claim.info.id) }
        let finished = try database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: config.workerID).finish(probed: done.compactMap { $0.probedFile })
        }
        for probe in done {
            guard finished.contains(probe.claim.info.id) else {
                Log.warning("planning lease lost after publishing; another worker fetches it again", probe.fields)
                continue
            }
            if probe.isUnchanged {
                Log.info("unchanged at the origin (304); kept the file", probe.fields)
            } else {
                Log.info("transfer done", probe.fields + [("dest", probe.plan?.dest ?? "")] + (probe.digest.map { [("digest", $0)] } ?? []))
            }
        }
    }
}

/// Thrown by a probe's head callback to drop a response the fetchers will ask for again.
private struct HandOff: Error {}

/// One transfer's probe in a batch, as its response arrives (on the lane's thread only).
private final class Probe {
    let claim: TransferLeases.Claim
    let root: StorageRoot
    let previous: TransferLeases.PreviousVersion?
    /// Set when a lease renewal found the transfer taken over (or cancelled): stop writing.
    var leaseLost = false
    private(set) var verdict = Verdict.waiting
    private(set) var plan: TransferLeases.Plan?
    private var files: TransferFiles?
    private(set) var partial = ""
    private(set) var destination = ""
    private(set) var digest: String?
    private var descriptor: Int32 = -1
    private var digester: Digester?
    private var received: Int64 = 0
    /// What a plan may be, read from the worker when the job is made.
    private var limits = PlanLimits()

    enum Verdict {
        case waiting
        /// The whole file is in this response, being written to `partial`.
        case whole
        /// `304 Not Modified`: the file on storage is current.
        case unchanged
        /// For the fetchers: the plan to write with every segment queued.
        case handOff(TransferLeases.Plan)
        /// Another worker holds the transfer now (or it was cancelled): leave it alone.
        case lost
        case failed(Error)
    }

    init(claim: TransferLeases.Claim, root: StorageRoot, previous: TransferLeases.PreviousVersion?) {
        self.claim = claim
        self.root = root
        self.previous = previous
    }

    var fields: [(String, String)] { [("transfer", String(claim.info.id))] }
    var isUnchanged: Bool { if case .unchanged = verdict { true } else { false } }

    /// What `finish(probed:)` records, for a probe that finished its transfer.
    var probedFile: TransferLeases.ProbedFile? {
        guard let plan else { return nil }
        return TransferLeases.ProbedFile(claim: claim, plan: plan, digest: digest, unchanged: isUnchanged)
    }

    /// The probe's request, with callbacks that write the body and count it in `shared`'s progress and metrics.
    func job(shared: WorkerShared) -> MultiClient.Job {
        let info = claim.info
        limits = shared.planLimits(for: info)
        var request = shared.request(for: info, first: 0, last: info.segmentSize - 1, capBody: true)
        ConditionalProbe.ask(&request, ifChangedSince: previous)
        return MultiClient.Job(
            request: request, onHead: { [self] head in try accept(head) },
            onData: { [self] bytes in
                try write(bytes)
                shared.progress.add(Int64(bytes.count), transfer: info.id)
                shared.metrics.bytesFetched.add(bytes.count)
            })
    }

    /// Decides from the head what this probe does with its response.
    private func accept(_ head: ResponseHead) throws {
        let info = claim.info
        let outcome = try ProbeOutcome.classify(head, requestedLast: info.segmentSize - 1, url: info.url)
        if outcome == .notModified || ConditionalProbe.notNewer(head, than: previous, info: info) {
            let kept = try ConditionalProbe.unchanged(head, previous: info.dest == nil ? nil : previous)
            plan = TransferLeases.Plan(
                dest: info.dest ?? "", host: OriginURL.hostKey(info.url), size: kept.size, etag: kept.etag,
                lastModified: kept.lastModified, contentType: nil, acceptsRanges: false, ranges: [], unknownLength: false)
            verdict = .unchanged
            return
        }
        let plan = try Planner.plan(outcome, head: head, info: info, storage: root, limits: limits)
        let staged = info.options.extract == true || info.options.uploadTo != nil
        guard plan.ranges.count <= 1, !plan.unknownLength, (plan.size ?? 0) <= BatchProbe.wholeFileLimit, !staged else {
            verdict = .handOff(plan)
            throw HandOff()
        }
        let files = try TransferFiles(root: root, relative: plan.dest)
        self.files = files
        partial = files.partial(generation: claim.generation)
        destination = files.destination
        descriptor = try root.openFile(partial, O_WRONLY | O_CREAT | O_TRUNC, doing: "create")
        digester = info.digestAlgorithm.map(Digester.init)
        self.plan = plan
        verdict = .whole
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !leaseLost else { throw HaulError(.leaseLost, "another worker holds transfer \(claim.info.id) now") }
        guard received + Int64(bytes.count) <= plan?.size ?? 0 else {
            throw HaulError(.sizeMismatch, "the origin sent more than the \(plan?.size ?? 0) bytes it announced", transient: true)
        }
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else { throw Errno.storageError(errno, "write \(partial)") }
            offset += written
        }
        digester?.update(bytes)
        received += Int64(bytes.count)
    }

    /// Takes the request's outcome: checks the size and digest of a whole file.
    func end(_ outcome: Result<HTTPClient.Summary, Error>) {
        if case .handOff = verdict { return }
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        do {
            _ = try outcome.get()
            guard case .whole = verdict else { return }
            let size = plan?.size ?? 0
            guard received == size else {
                throw HaulError(.incomplete, "the origin sent \(received) of the \(size) bytes it announced", transient: true)
            }
            digest = try digester.map { try claim.info.verified($0.finish()) }
        } catch {
            discard()
            verdict = leaseLost ? .lost : .failed(error)
        }
    }

    /// Renames the synced file into place (replacing an earlier version atomically) and removes
    /// what earlier attempts of this transfer may have left.
    func publish() throws {
        guard let files else { throw HaulError(.`internal`, "transfer \(claim.info.id) was published before it was written") }
        try Assembler.place(partial, as: files, generation: claim.generation)
    }

    /// Removes the partial file of a probe that will not be published.
    func discard() {
        if !partial.isEmpty { unlink(partial) }
    }
}
