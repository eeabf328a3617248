import Foundation
import HaulCore
import HaulHTTP
import HaulQueue
import HaulStorage

/// The planner for many small files at once. A batch of pending transfers of one origin is
/// probed together over the lane's `MultiClient` (connections kept across batches), each with
/// its first segment's ranged GET, as a lone probe would be. A file that fits in that one
/// response is stored by the batch (`BatchStorage`, around the storage's `BatchStore`: a file
/// written, synced and renamed into place, or an object streamed into one `PutObject`), and
/// the whole batch is recorded done in one transaction, so a small file costs a share of four
/// round trips (claim, earlier versions, lease check, finish) instead of a dozen and one
/// `syncfs` instead of its own flushes.
///
/// What the batch does not finish it hands on: a file bigger than one segment or than its
/// storage takes whole, of unknown length, or with `--extract` / `--upload-to` gets its plan
/// written with every segment queued for the fetchers (its probe response is dropped after the
/// head; the fetchers ask again); a failed probe is retried with backoff like a lone one.
/// Files finished here are not checkpointed: a crash mid-batch fetches them again whole.
struct BatchProbe: LaneRole {
    let lane: Lane

    /// Probes `claims` over at most `connections` connections at once, then settles them: hands
    /// on or retries what the batch does not finish, has the storage's `BatchStore` keep the
    /// rest, and records them.
    func run(_ claims: [TransferLeases.Claim], connections: Int) throws {
        let config = shared.config
        let leases = BatchLeases(claims: claims, database: database, config: config)
        let storage = BatchStorage(store: config.backend.batchStore(), leases: leases, database: database, config: config)
        let planner = Planner(lane: lane)
        // A file already at a destination that its transfer may not replace (`OthersFiles`)
        // fails that transfer before anything is fetched; the file stays as it was.
        var claims = claims
        var onStorage = storage.lookUp(claims)
        for index in claims.indices.reversed() {
            guard onStorage[index] != nil, let dest = claims[index].info.dest else { continue }
            do {
                try storage.refuseOthers(dest, of: claims[index])
            } catch {
                planner.planningFailed(claims[index], error: error)
                claims.remove(at: index)
                onStorage.remove(at: index)
            }
        }
        guard !claims.isEmpty else { return }
        let asked = zip(claims, onStorage).filter { ConditionalProbe.usesRecord($0.0.info, onStorage: $0.1) }.map(\.0)
        let previous =
            asked.isEmpty ? [:] : try database.run { conn in try TransferLeases(conn, workerID: config.workerID).previousVersions(of: asked) }
        // A file the origin names is looked for where its earlier version was saved: across the
        // network a round trip each, side by side as the batch's lookups are.
        let looksUp = claims.contains { $0.info.dest == nil && previous[$0.info.id] != nil }
        let (known, sizes) = (claims, onStorage)
        let baselines = Concurrently.map(claims.count, width: looksUp ? storage.lookupWidth : 1) { index in
            ConditionalProbe.baseline(recorded: previous[known[index].info.id], onStorage: sizes[index], info: known[index].info, config: config)
        }
        let probes = claims.indices.map { BatchedProbe(claim: claims[$0], storage: storage, previous: baselines[$0]) }
        lane.multi.run(
            probes.map { $0.job(shared: shared) }, connections: connections,
            shouldContinue: {
                guard !shared.isStopping() else { return false }
                leases.renewIfDue()
                return true
            },
            onFinish: { index, outcome in probes[index].end(outcome) })
        releaseSlots(claims)
        handOnOrRetry(probes.filter { !$0.failedWithMirrors }, planner: planner)
        let done = try storage.store(probes.filter { $0.isWhole }, unchanged: probes.filter { $0.isUnchanged }, planner: planner)
        let recorded = try record(done, storage: storage)
        Log.info("small files recorded", BatchSummary(probes, recorded: recorded, host: claims[0].info.host).fields)
        // The batch probed each file at its own URL. A file with mirrors whose probe failed there
        // is probed again on its own, on its mirrors in priority order (`Planner.plan`), once the
        // batch's files are recorded; it takes the usual retry only when every mirror fails.
        // Its slot was given back with the batch's (or it held none): the probe takes one of the
        // host of each mirror it tries.
        for probe in probes where probe.failedWithMirrors {
            var claim = probe.claim
            claim.holdsSlot = false
            try planner.plan(claim)
        }
    }

    /// Every request of the batch has ended: gives its host slots back at once (rather than with
    /// the rows' final states) and wakes one of this worker's idle lanes, so the next batch fetches
    /// while this one stores and records. Best effort: a slot not given back here is given back with its row.
    private func releaseSlots(_ claims: [TransferLeases.Claim]) {
        let config = shared.config
        database.bestEffort("give back the batch's host slots") { conn in
            try TransferLeases(conn, workerID: config.workerID).releaseSlots(claims)
        }
        shared.announceWorkForOne()
    }

    /// Writes the plans of the files the batch hands to the fetchers; schedules the failed probes' retries.
    private func handOnOrRetry(_ probes: [BatchedProbe], planner: Planner) {
        for probe in probes {
            switch probe.verdict {
            case .handOff(let plan):
                do {
                    if case .lost = try planner.record(plan, of: probe.claim, keepFirst: false) {
                        Log.warning("planning lease lost; another worker plans it", probe.fields)
                    }
                } catch {
                    planner.planningFailed(probe.claim, error: error)
                }
            case .failed(let error): planner.planningFailed(probe.claim, error: error)
            case .lost: Log.warning("planning lease lost mid-probe; another worker has it", probe.fields)
            case .whole, .unchanged: break  // stored and recorded next
            case .waiting: break  // never started (the worker is stopping): its lease runs out
            }
        }
    }

    /// Records the stored files, and the unchanged ones, done in one transaction, with a line for
    /// each as a lone file has (an operator follows a transfer by its id). - Returns: the probes recorded.
    private func record(_ done: [BatchedProbe], storage: BatchStorage) throws -> [BatchedProbe] {
        let config = shared.config
        let finished = try database.run(patient: true) { conn in
            try TransferLeases(conn, workerID: config.workerID).finish(probed: done.compactMap { $0.probedFile })
        }
        for probe in done where !finished.contains(probe.claim.info.id) {
            Log.warning("planning lease lost after \(storage.storing); another worker fetches it again", probe.fields)
        }
        let recorded = done.filter { finished.contains($0.claim.info.id) }
        for probe in recorded {
            if probe.isUnchanged {
                Log.info("unchanged at the origin (304); kept the \(storage.noun)", probe.fields)
            } else {
                Log.info("transfer done", probe.fields + [("dest", probe.plan?.dest ?? "")] + (probe.digest.map { [("digest", $0)] } ?? []))
            }
        }
        return recorded
    }
}

/// The one line a batch logs at its end: what became of its files.
struct BatchSummary {
    /// Recorded done, fetched whole.
    var done = 0
    /// Recorded done, unchanged at the origin (`304`, or no newer than the file).
    var unchanged = 0
    /// Bytes of the files fetched whole and recorded.
    var bytes: Int64 = 0
    /// Planned for the fetchers (bigger than one response, of unknown length, staged, or named by the origin).
    var handedOn = 0
    /// Failed probes, to be retried with backoff (each has a line of its own).
    var failed = 0
    let host: String

    init(_ probes: [BatchedProbe], recorded: [BatchedProbe], host: String) {
        self.host = host
        for probe in recorded {
            if probe.isUnchanged {
                unchanged += 1
            } else {
                done += 1
                bytes += probe.plan?.size ?? 0
            }
        }
        for probe in probes {
            switch probe.verdict {
            case .handOff: handedOn += 1
            case .failed: failed += 1
            case .waiting, .whole, .unchanged, .lost: break
            }
        }
    }

    /// `host=… done=… unchanged=… bytes=… handed_on=… failed=…`
    var fields: [(String, String)] {
        [
            ("host", host), ("done", String(done)), ("unchanged", String(unchanged)), ("bytes", String(bytes)), ("handed_on", String(handedOn)),
            ("failed", String(failed)),
        ]
    }
}
